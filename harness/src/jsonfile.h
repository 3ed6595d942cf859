/* JSON documents kbench writes whole (a manifest, an export): written to a temporary file
 * beside the target and renamed over it, so a reader never sees half a file, with numbers to
 * the 10 significant digits results files use. */
#ifndef KBENCH_JSONFILE_H
#define KBENCH_JSONFILE_H

#include <jansson.h>
#include <stdio.h>

/* Writes j, indented by `indent` spaces, with a final newline, to path ("-": stdout).
 * Returns KBI_OK, or KBI_ERR_IO with err naming the path and the system's reason (nothing is
 * left at path then, and an older file there is kept). */
int kbi_json_write_file(const json_t *j, const char *path, int indent, char *err);

#endif
