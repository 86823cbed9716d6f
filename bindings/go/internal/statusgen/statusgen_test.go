package statusgen

import (
	"os"
	"strings"
	"testing"
)

func read(t *testing.T) (header, catalogue string) {
	t.Helper()
	h, err := os.ReadFile("../../../../include/tensorblob.h")
	if err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile("../../../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(h), string(c)
}

func TestRealHeader(t *testing.T) {
	h, c := read(t)
	list, err := Parse([]byte(h), []byte(c))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(h, " = -"); len(list) < 100 || len(list) > n+1 {
		t.Errorf("%d statuses", len(list))
	}
	names := map[string]bool{}
	for _, s := range list {
		names[s.GoName] = true
	}
	for _, want := range []string{"StatusOK", "ErrDigestMismatch", "ErrTrailingBytes", "ErrJSON", "ErrUTF8", "ErrIO", "ErrUQFFScalar", "ErrSLM1Checksum", "ErrDType"} {
		if !names[want] {
			t.Errorf("no %s", want)
		}
	}
}

// The generator refuses an incomplete list instead of emitting a shorter one.
func TestFailsWhenAStatusIsMissing(t *testing.T) {
	h, c := read(t)
	cases := map[string][2]string{
		"missing from the catalogue": {h, strings.Replace(c, "`TBLOB_E_TRAILING_BYTES`", "`TBLOB_E_TRAILING`", 1)},
		"missing from the header":    {strings.Replace(h, "TBLOB_E_TRAILING_BYTES = -32,", "", 1), c},
		"unparsable enumerator":      {strings.Replace(h, "TBLOB_E_TRAILING_BYTES = -32,", "TBLOB_E_TRAILING_BYTES = TBLOB_E_OFFSETS - 1,", 1), c},
		"duplicate number":           {strings.Replace(h, "TBLOB_E_TRAILING_BYTES = -32,", "TBLOB_E_TRAILING_BYTES = -31,", 1), c},
		"no enum":                    {"int x;", c},
	}
	for name, in := range cases {
		if _, err := Generate("p", []byte(in[0]), []byte(in[1])); err == nil {
			t.Errorf("%s: generated anyway", name)
		} else if name != "no enum" && !strings.Contains(err.Error(), "TRAILING") && !strings.Contains(err.Error(), "OFFSETS") {
			t.Errorf("%s: %v does not name the status", name, err)
		}
	}
}

func TestGoName(t *testing.T) {
	for c, g := range map[string]string{
		"TBLOB_OK": "StatusOK", "TBLOB_E_DIGEST_MISMATCH": "ErrDigestMismatch", "TBLOB_E_UTF8": "ErrUTF8",
		"TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH": "ErrOllamaManifestZeroLength", "TBLOB_E_UQFF_GGML_TYPE": "ErrUQFFGGMLType",
	} {
		if got := GoName(c); got != g {
			t.Errorf("GoName(%s) = %s, want %s", c, got, g)
		}
	}
}
