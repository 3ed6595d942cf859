/* JSON documents written whole: see jsonfile.h. */
#define _POSIX_C_SOURCE 200809L
#include "jsonfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* j as text to f.  Returns 0 or -1 (errno set). */
static int dump(const json_t *j, FILE *f, int indent)
{
    size_t flags = JSON_INDENT(indent) | JSON_REAL_PRECISION(10);
    return json_dumpf(j, f, flags) == 0 && fputc('\n', f) != EOF ? 0 : -1;
}

int kbi_json_write_file(const json_t *j, const char *path, int indent, char *err)
{
    kbi_buf tmp = {0};
    FILE *f;
    int rc;
    if (strcmp(path, "-") == 0) {
        if (dump(j, stdout, indent) == 0 && fflush(stdout) == 0)
            return KBI_OK;
        kbi_errf(err, "stdout: cannot write: %s", strerror(errno));
        return KBI_ERR_IO;
    }
    kbi_buf_printf(&tmp, "%s.tmp", path);
    f = fopen(tmp.data, "w");
    rc = f && dump(j, f, indent) == 0 ? 0 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp.data, path) != 0)
        rc = -1;
    if (rc != 0) {
        kbi_errf(err, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp.data);
    }
    kbi_buf_free(&tmp);
    return rc == 0 ? KBI_OK : KBI_ERR_IO;
}
