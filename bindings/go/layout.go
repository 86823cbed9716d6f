//go:build cgo

package tensorblob

// Struct layouts as the C compiler sees them (offsetof/sizeof, compiled in C) and as Go sees
// them through cgo (unsafe.Sizeof/Offsetof), for layout_test.go: every struct and field the
// package touches.

/*
#define TBLOB_EXPERIMENTAL_API
#include <stddef.h>
#include "tensorblob.h"

typedef struct tg_layout { const char *name; size_t value; } tg_layout;
#define S(T) {#T, sizeof(T)}
#define F(T, f) {#T "." #f, offsetof(T, f)}
static const tg_layout tg_layouts[] = {
  S(tblob_diag), F(tblob_diag, status), F(tblob_diag, offset), F(tblob_diag, tensor_index),
  F(tblob_diag, message),
  S(tblob_allocator), F(tblob_allocator, alloc), F(tblob_allocator, free), F(tblob_allocator, opaque),
  F(tblob_allocator, reserved),
  S(tblob_open_options), F(tblob_open_options, mode), F(tblob_open_options, max_header_bytes),
  F(tblob_open_options, max_tensors), F(tblob_open_options, max_name_bytes),
  F(tblob_open_options, max_rank), F(tblob_open_options, max_json_depth),
  F(tblob_open_options, max_files), F(tblob_open_options, flags), F(tblob_open_options, allocator),
  S(tblob_tensor_info), F(tblob_tensor_info, dtype), F(tblob_tensor_info, name),
  F(tblob_tensor_info, name_len), F(tblob_tensor_info, shape), F(tblob_tensor_info, rank),
  F(tblob_tensor_info, file_index), F(tblob_tensor_info, data_offset),
  F(tblob_tensor_info, data_length), F(tblob_tensor_info, file_offset),
  F(tblob_tensor_info, element_count), F(tblob_tensor_info, logical_shape),
  F(tblob_tensor_info, logical_elements), F(tblob_tensor_info, logical_rank),
  F(tblob_tensor_info, quant_scheme), F(tblob_tensor_info, quant_flags),
  F(tblob_tensor_info, reserved),
  S(tblob_store_options), F(tblob_store_options, flags), F(tblob_store_options, allocator),
  S(tblob_store_open_options), F(tblob_store_open_options, open),
  F(tblob_store_open_options, component), F(tblob_store_open_options, component_len),
  S(tblob_store_entry), F(tblob_store_entry, status), F(tblob_store_entry, name),
  F(tblob_store_entry, name_len), F(tblob_store_entry, short_name),
  F(tblob_store_entry, short_name_len), F(tblob_store_entry, manifest_id),
  F(tblob_store_entry, manifest_id_len), F(tblob_store_entry, manifest_bytes),
  F(tblob_store_entry, total_bytes), F(tblob_store_entry, layer_count),
  F(tblob_store_entry, tensor_layer_count), F(tblob_store_entry, modified_unix),
  F(tblob_store_entry, message),
  S(tblob_verify_progress), F(tblob_verify_progress, blobs_total),
  F(tblob_verify_progress, blobs_done), F(tblob_verify_progress, bytes_total),
  F(tblob_verify_progress, bytes_done),
  S(tblob_blob_result), F(tblob_blob_result, status), F(tblob_blob_result, digest),
  F(tblob_blob_result, digest_len), F(tblob_blob_result, actual_digest),
  F(tblob_blob_result, actual_digest_len), F(tblob_blob_result, expected_size),
  F(tblob_blob_result, actual_size), F(tblob_blob_result, path), F(tblob_blob_result, path_len),
  F(tblob_blob_result, message),
  S(tblob_verify_options), F(tblob_verify_options, threads), F(tblob_verify_options, progress),
  F(tblob_verify_options, progress_user), F(tblob_verify_options, on_blob),
  F(tblob_verify_options, on_blob_user), F(tblob_verify_options, flags),
  S(tblob_verify_summary), F(tblob_verify_summary, threads_used),
  F(tblob_verify_summary, manifests), F(tblob_verify_summary, manifests_bad),
  F(tblob_verify_summary, blobs), F(tblob_verify_summary, blobs_bad),
  F(tblob_verify_summary, bytes_hashed),
  S(tblob_import_progress), F(tblob_import_progress, tensors_total),
  F(tblob_import_progress, tensors_done), F(tblob_import_progress, bytes_total),
  F(tblob_import_progress, bytes_done),
  S(tblob_import_options), F(tblob_import_options, flags), F(tblob_import_options, open),
  F(tblob_import_options, progress), F(tblob_import_options, progress_user),
  S(tblob_import_result), F(tblob_import_result, manifest_written), F(tblob_import_result, layers),
  F(tblob_import_result, tensors), F(tblob_import_result, blobs_written),
  F(tblob_import_result, blobs_reused), F(tblob_import_result, bytes_written),
  S(tblob_gc_entry), F(tblob_gc_entry, kind), F(tblob_gc_entry, file_name),
  F(tblob_gc_entry, file_name_len), F(tblob_gc_entry, size), F(tblob_gc_entry, removed),
  F(tblob_gc_entry, reserved),
  S(tblob_gc_options), F(tblob_gc_options, flags), F(tblob_gc_options, on_entry),
  F(tblob_gc_options, user), F(tblob_gc_options, min_age_seconds),
  S(tblob_gc_result), F(tblob_gc_result, manifests), F(tblob_gc_result, referenced_blobs),
  F(tblob_gc_result, listed_files), F(tblob_gc_result, listed_bytes),
  F(tblob_gc_result, removed_files), F(tblob_gc_result, removed_bytes),
  S(tblob_slm1_open_options), F(tblob_slm1_open_options, required_names),
  F(tblob_slm1_open_options, required_name_lens), F(tblob_slm1_open_options, required_name_count),
  S(tblob_slm1_header_info), F(tblob_slm1_header_info, version),
  F(tblob_slm1_header_info, model_type), F(tblob_slm1_header_info, flags),
  F(tblob_slm1_header_info, vocab_size), F(tblob_slm1_header_info, hidden_size),
  F(tblob_slm1_header_info, layer_count), F(tblob_slm1_header_info, head_count),
  F(tblob_slm1_header_info, kv_head_count), F(tblob_slm1_header_info, head_dim),
  F(tblob_slm1_header_info, ffn_size), F(tblob_slm1_header_info, max_context),
  F(tblob_slm1_header_info, rope_theta), F(tblob_slm1_header_info, rms_norm_epsilon),
  F(tblob_slm1_header_info, tensor_count), F(tblob_slm1_header_info, checksum),
  F(tblob_slm1_header_info, checksum_verified),
  S(tblob_uqff_layer_info), F(tblob_uqff_layer_info, family), F(tblob_uqff_layer_info, label),
  F(tblob_uqff_layer_info, ggml_type), F(tblob_uqff_layer_info, bits),
  F(tblob_uqff_layer_info, group_size), F(tblob_uqff_layer_info, weight_dtype),
  F(tblob_uqff_layer_info, scale_dtype), F(tblob_uqff_layer_info, shard),
  F(tblob_uqff_layer_info, experts), F(tblob_uqff_layer_info, rows),
  F(tblob_uqff_layer_info, cols), F(tblob_uqff_layer_info, stored_bytes),
};
static size_t tg_layout_count(void) { return sizeof tg_layouts / sizeof tg_layouts[0]; }
static const char *tg_layout_name(size_t i) { return tg_layouts[i].name; }
static size_t tg_layout_value(size_t i) { return tg_layouts[i].value; }
*/
import "C"

import "unsafe"

// cLayouts is what the C compiler reports.
func cLayouts() map[string]uintptr {
	out := map[string]uintptr{}
	for i := C.size_t(0); i < C.tg_layout_count(); i++ {
		out[C.GoString(C.tg_layout_name(i))] = uintptr(C.tg_layout_value(i))
	}
	return out
}

// goLayouts is what Go sees of the same structs through cgo.
func goLayouts() map[string]uintptr {
	var (
		diag  C.tblob_diag
		alloc C.tblob_allocator
		oo    C.tblob_open_options
		ti    C.tblob_tensor_info
		so    C.tblob_store_options
		soo   C.tblob_store_open_options
		se    C.tblob_store_entry
		vp    C.tblob_verify_progress
		br    C.tblob_blob_result
		vo    C.tblob_verify_options
		vs    C.tblob_verify_summary
		ip    C.tblob_import_progress
		io    C.tblob_import_options
		ir    C.tblob_import_result
		ge    C.tblob_gc_entry
		gco   C.tblob_gc_options
		gr    C.tblob_gc_result
		s1o   C.tblob_slm1_open_options
		s1h   C.tblob_slm1_header_info
		uq    C.tblob_uqff_layer_info
	)
	return map[string]uintptr{
		"tblob_diag": unsafe.Sizeof(diag), "tblob_diag.status": unsafe.Offsetof(diag.status),
		"tblob_diag.offset": unsafe.Offsetof(diag.offset), "tblob_diag.tensor_index": unsafe.Offsetof(diag.tensor_index),
		"tblob_diag.message": unsafe.Offsetof(diag.message),
		"tblob_allocator":    unsafe.Sizeof(alloc), "tblob_allocator.alloc": unsafe.Offsetof(alloc.alloc),
		"tblob_allocator.reserved": unsafe.Offsetof(alloc.reserved),
		"tblob_allocator.free":     unsafe.Offsetof(alloc.free), "tblob_allocator.opaque": unsafe.Offsetof(alloc.opaque),
		"tblob_open_options": unsafe.Sizeof(oo), "tblob_open_options.mode": unsafe.Offsetof(oo.mode),
		"tblob_open_options.max_header_bytes": unsafe.Offsetof(oo.max_header_bytes),
		"tblob_open_options.max_tensors":      unsafe.Offsetof(oo.max_tensors),
		"tblob_open_options.max_name_bytes":   unsafe.Offsetof(oo.max_name_bytes),
		"tblob_open_options.max_rank":         unsafe.Offsetof(oo.max_rank),
		"tblob_open_options.max_json_depth":   unsafe.Offsetof(oo.max_json_depth),
		"tblob_open_options.max_files":        unsafe.Offsetof(oo.max_files),
		"tblob_open_options.flags":            unsafe.Offsetof(oo.flags),
		"tblob_open_options.allocator":        unsafe.Offsetof(oo.allocator),
		"tblob_tensor_info":                   unsafe.Sizeof(ti), "tblob_tensor_info.dtype": unsafe.Offsetof(ti.dtype),
		"tblob_tensor_info.name": unsafe.Offsetof(ti.name), "tblob_tensor_info.name_len": unsafe.Offsetof(ti.name_len),
		"tblob_tensor_info.shape": unsafe.Offsetof(ti.shape), "tblob_tensor_info.rank": unsafe.Offsetof(ti.rank),
		"tblob_tensor_info.file_index":       unsafe.Offsetof(ti.file_index),
		"tblob_tensor_info.data_offset":      unsafe.Offsetof(ti.data_offset),
		"tblob_tensor_info.data_length":      unsafe.Offsetof(ti.data_length),
		"tblob_tensor_info.file_offset":      unsafe.Offsetof(ti.file_offset),
		"tblob_tensor_info.element_count":    unsafe.Offsetof(ti.element_count),
		"tblob_tensor_info.logical_shape":    unsafe.Offsetof(ti.logical_shape),
		"tblob_tensor_info.logical_elements": unsafe.Offsetof(ti.logical_elements),
		"tblob_tensor_info.logical_rank":     unsafe.Offsetof(ti.logical_rank),
		"tblob_tensor_info.quant_scheme":     unsafe.Offsetof(ti.quant_scheme),
		"tblob_tensor_info.quant_flags":      unsafe.Offsetof(ti.quant_flags),
		"tblob_tensor_info.reserved":         unsafe.Offsetof(ti.reserved),
		"tblob_store_options":                unsafe.Sizeof(so), "tblob_store_options.flags": unsafe.Offsetof(so.flags),
		"tblob_store_options.allocator": unsafe.Offsetof(so.allocator),
		"tblob_store_open_options":      unsafe.Sizeof(soo), "tblob_store_open_options.open": unsafe.Offsetof(soo.open),
		"tblob_store_open_options.component":     unsafe.Offsetof(soo.component),
		"tblob_store_open_options.component_len": unsafe.Offsetof(soo.component_len),
		"tblob_store_entry":                      unsafe.Sizeof(se), "tblob_store_entry.status": unsafe.Offsetof(se.status),
		"tblob_store_entry.name": unsafe.Offsetof(se.name), "tblob_store_entry.name_len": unsafe.Offsetof(se.name_len),
		"tblob_store_entry.short_name":         unsafe.Offsetof(se.short_name),
		"tblob_store_entry.short_name_len":     unsafe.Offsetof(se.short_name_len),
		"tblob_store_entry.manifest_id":        unsafe.Offsetof(se.manifest_id),
		"tblob_store_entry.manifest_id_len":    unsafe.Offsetof(se.manifest_id_len),
		"tblob_store_entry.manifest_bytes":     unsafe.Offsetof(se.manifest_bytes),
		"tblob_store_entry.total_bytes":        unsafe.Offsetof(se.total_bytes),
		"tblob_store_entry.layer_count":        unsafe.Offsetof(se.layer_count),
		"tblob_store_entry.tensor_layer_count": unsafe.Offsetof(se.tensor_layer_count),
		"tblob_store_entry.modified_unix":      unsafe.Offsetof(se.modified_unix),
		"tblob_store_entry.message":            unsafe.Offsetof(se.message),
		"tblob_verify_progress":                unsafe.Sizeof(vp), "tblob_verify_progress.blobs_total": unsafe.Offsetof(vp.blobs_total),
		"tblob_verify_progress.blobs_done":  unsafe.Offsetof(vp.blobs_done),
		"tblob_verify_progress.bytes_total": unsafe.Offsetof(vp.bytes_total),
		"tblob_verify_progress.bytes_done":  unsafe.Offsetof(vp.bytes_done),
		"tblob_blob_result":                 unsafe.Sizeof(br), "tblob_blob_result.status": unsafe.Offsetof(br.status),
		"tblob_blob_result.digest": unsafe.Offsetof(br.digest), "tblob_blob_result.digest_len": unsafe.Offsetof(br.digest_len),
		"tblob_blob_result.actual_digest":     unsafe.Offsetof(br.actual_digest),
		"tblob_blob_result.actual_digest_len": unsafe.Offsetof(br.actual_digest_len),
		"tblob_blob_result.expected_size":     unsafe.Offsetof(br.expected_size),
		"tblob_blob_result.actual_size":       unsafe.Offsetof(br.actual_size),
		"tblob_blob_result.path":              unsafe.Offsetof(br.path),
		"tblob_blob_result.path_len":          unsafe.Offsetof(br.path_len),
		"tblob_blob_result.message":           unsafe.Offsetof(br.message),
		"tblob_verify_options":                unsafe.Sizeof(vo), "tblob_verify_options.threads": unsafe.Offsetof(vo.threads),
		"tblob_verify_options.progress":      unsafe.Offsetof(vo.progress),
		"tblob_verify_options.progress_user": unsafe.Offsetof(vo.progress_user),
		"tblob_verify_options.on_blob":       unsafe.Offsetof(vo.on_blob),
		"tblob_verify_options.on_blob_user":  unsafe.Offsetof(vo.on_blob_user),
		"tblob_verify_options.flags":         unsafe.Offsetof(vo.flags),
		"tblob_verify_summary":               unsafe.Sizeof(vs), "tblob_verify_summary.threads_used": unsafe.Offsetof(vs.threads_used),
		"tblob_verify_summary.manifests":     unsafe.Offsetof(vs.manifests),
		"tblob_verify_summary.manifests_bad": unsafe.Offsetof(vs.manifests_bad),
		"tblob_verify_summary.blobs":         unsafe.Offsetof(vs.blobs),
		"tblob_verify_summary.blobs_bad":     unsafe.Offsetof(vs.blobs_bad),
		"tblob_verify_summary.bytes_hashed":  unsafe.Offsetof(vs.bytes_hashed),
		"tblob_import_progress":              unsafe.Sizeof(ip), "tblob_import_progress.tensors_total": unsafe.Offsetof(ip.tensors_total),
		"tblob_import_progress.tensors_done": unsafe.Offsetof(ip.tensors_done),
		"tblob_import_progress.bytes_total":  unsafe.Offsetof(ip.bytes_total),
		"tblob_import_progress.bytes_done":   unsafe.Offsetof(ip.bytes_done),
		"tblob_import_options":               unsafe.Sizeof(io), "tblob_import_options.flags": unsafe.Offsetof(io.flags),
		"tblob_import_options.open": unsafe.Offsetof(io.open), "tblob_import_options.progress": unsafe.Offsetof(io.progress),
		"tblob_import_options.progress_user": unsafe.Offsetof(io.progress_user),
		"tblob_import_result":                unsafe.Sizeof(ir), "tblob_import_result.manifest_written": unsafe.Offsetof(ir.manifest_written),
		"tblob_import_result.layers": unsafe.Offsetof(ir.layers), "tblob_import_result.tensors": unsafe.Offsetof(ir.tensors),
		"tblob_import_result.blobs_written": unsafe.Offsetof(ir.blobs_written),
		"tblob_import_result.blobs_reused":  unsafe.Offsetof(ir.blobs_reused),
		"tblob_import_result.bytes_written": unsafe.Offsetof(ir.bytes_written),
		"tblob_gc_entry":                    unsafe.Sizeof(ge), "tblob_gc_entry.kind": unsafe.Offsetof(ge.kind),
		"tblob_gc_entry.file_name": unsafe.Offsetof(ge.file_name), "tblob_gc_entry.file_name_len": unsafe.Offsetof(ge.file_name_len),
		"tblob_gc_entry.size": unsafe.Offsetof(ge.size), "tblob_gc_entry.removed": unsafe.Offsetof(ge.removed),
		"tblob_gc_entry.reserved": unsafe.Offsetof(ge.reserved),
		"tblob_gc_options":        unsafe.Sizeof(gco), "tblob_gc_options.flags": unsafe.Offsetof(gco.flags),
		"tblob_gc_options.on_entry": unsafe.Offsetof(gco.on_entry), "tblob_gc_options.user": unsafe.Offsetof(gco.user),
		"tblob_gc_options.min_age_seconds": unsafe.Offsetof(gco.min_age_seconds),
		"tblob_gc_result":                  unsafe.Sizeof(gr), "tblob_gc_result.manifests": unsafe.Offsetof(gr.manifests),
		"tblob_gc_result.referenced_blobs": unsafe.Offsetof(gr.referenced_blobs),
		"tblob_gc_result.listed_files":     unsafe.Offsetof(gr.listed_files),
		"tblob_gc_result.listed_bytes":     unsafe.Offsetof(gr.listed_bytes),
		"tblob_gc_result.removed_files":    unsafe.Offsetof(gr.removed_files),
		"tblob_gc_result.removed_bytes":    unsafe.Offsetof(gr.removed_bytes),
		"tblob_slm1_open_options":          unsafe.Sizeof(s1o), "tblob_slm1_open_options.required_names": unsafe.Offsetof(s1o.required_names),
		"tblob_slm1_open_options.required_name_lens":  unsafe.Offsetof(s1o.required_name_lens),
		"tblob_slm1_open_options.required_name_count": unsafe.Offsetof(s1o.required_name_count),
		"tblob_slm1_header_info":                      unsafe.Sizeof(s1h), "tblob_slm1_header_info.version": unsafe.Offsetof(s1h.version),
		"tblob_slm1_header_info.model_type":        unsafe.Offsetof(s1h.model_type),
		"tblob_slm1_header_info.flags":             unsafe.Offsetof(s1h.flags),
		"tblob_slm1_header_info.vocab_size":        unsafe.Offsetof(s1h.vocab_size),
		"tblob_slm1_header_info.hidden_size":       unsafe.Offsetof(s1h.hidden_size),
		"tblob_slm1_header_info.layer_count":       unsafe.Offsetof(s1h.layer_count),
		"tblob_slm1_header_info.head_count":        unsafe.Offsetof(s1h.head_count),
		"tblob_slm1_header_info.kv_head_count":     unsafe.Offsetof(s1h.kv_head_count),
		"tblob_slm1_header_info.head_dim":          unsafe.Offsetof(s1h.head_dim),
		"tblob_slm1_header_info.ffn_size":          unsafe.Offsetof(s1h.ffn_size),
		"tblob_slm1_header_info.max_context":       unsafe.Offsetof(s1h.max_context),
		"tblob_slm1_header_info.rope_theta":        unsafe.Offsetof(s1h.rope_theta),
		"tblob_slm1_header_info.rms_norm_epsilon":  unsafe.Offsetof(s1h.rms_norm_epsilon),
		"tblob_slm1_header_info.tensor_count":      unsafe.Offsetof(s1h.tensor_count),
		"tblob_slm1_header_info.checksum":          unsafe.Offsetof(s1h.checksum),
		"tblob_slm1_header_info.checksum_verified": unsafe.Offsetof(s1h.checksum_verified),
		"tblob_uqff_layer_info":                    unsafe.Sizeof(uq), "tblob_uqff_layer_info.family": unsafe.Offsetof(uq.family),
		"tblob_uqff_layer_info.label": unsafe.Offsetof(uq.label), "tblob_uqff_layer_info.ggml_type": unsafe.Offsetof(uq.ggml_type),
		"tblob_uqff_layer_info.bits": unsafe.Offsetof(uq.bits), "tblob_uqff_layer_info.group_size": unsafe.Offsetof(uq.group_size),
		"tblob_uqff_layer_info.weight_dtype": unsafe.Offsetof(uq.weight_dtype),
		"tblob_uqff_layer_info.scale_dtype":  unsafe.Offsetof(uq.scale_dtype),
		"tblob_uqff_layer_info.shard":        unsafe.Offsetof(uq.shard),
		"tblob_uqff_layer_info.experts":      unsafe.Offsetof(uq.experts),
		"tblob_uqff_layer_info.rows":         unsafe.Offsetof(uq.rows),
		"tblob_uqff_layer_info.cols":         unsafe.Offsetof(uq.cols),
		"tblob_uqff_layer_info.stored_bytes": unsafe.Offsetof(uq.stored_bytes),
	}
}

// cStatusName is tblob_status_name (for status_test.go).
func cStatusName(s Status) string { return C.GoString(C.tblob_status_name(C.tblob_status(s))) }

// cDTypeName is tblob_dtype_name, "" for NULL.
func cDTypeName(d DType) string {
	p := C.tblob_dtype_name(C.uint32_t(d))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}
