/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* What kinstr report --html inlines into every page (lib/report/report.c): our drawing code, d3, d3-flame-graph. */
	.section .rodata
#define ASSET(sym, path) \
	.globl sym; .globl sym##_end; sym: .incbin path; sym##_end: .byte 0
	ASSET(kinstr_asset_report_js, REPORT_JS)
	ASSET(kinstr_asset_report_css, REPORT_CSS)
	ASSET(kinstr_asset_d3_js, D3_JS)
	ASSET(kinstr_asset_flame_js, FLAME_JS)
	ASSET(kinstr_asset_flame_css, FLAME_CSS)
	.section .note.GNU-stack,"",@progbits
