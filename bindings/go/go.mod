module github.com/tensorblob/tensorblob/bindings/go

go 1.24
