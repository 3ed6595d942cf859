/* ABI 1.4's roofs and headline (roofs.h): checked at load, looked up per variant when a case
 * is recorded. */
#define _POSIX_C_SOURCE 200809L
#include "roofs.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "loader.h"

static const struct {
    const char *name, *label;
} roofs[] = {
    {"fp32", "FP32 FMA peak"},
    {"tf32", "TF32 tensor-core peak"},
    {"tf32x3", "TF32 tensor-core peak / 3 (3xTF32)"},
    {"memory", "copy bandwidth"},
};
#define N_ROOFS (sizeof roofs / sizeof roofs[0])

int kbi_roof_known(const char *roof)
{
    return kbi_roof_label(roof)[0] != '\0';
}

const char *kbi_roof_label(const char *roof)
{
    for (size_t i = 0; roof && i < N_ROOFS; i++)
        if (strcmp(roofs[i].name, roof) == 0)
            return roofs[i].label;
    return "";
}

/* Whether d holds the 1.4 fields (the loader refuses a 1.4 descriptor too short for them). */
static int has_1_4(const kb_plugin *d)
{
    return KB_ABI_MINOR_OF(d->abi_version) >= 4 && KBI_DESC_HAS(d, headline);
}

const char *kbi_headline_of(const kb_plugin *d)
{
    if (has_1_4(d) && d->headline && strcmp(d->headline, KBI_HEADLINE_TIME_PER_ITEM) == 0)
        return KBI_HEADLINE_TIME_PER_ITEM;
    return "";
}

/* Entry i of "variant=roof;...": its variant and roof, copied (each under 128 bytes).
 * Returns 0 past the last entry. */
static int roof_entry(const char *list, size_t i, char *variant, char *roof)
{
    const char *p = list;
    for (size_t k = 0; p && k < i; k++) {
        p = strchr(p, ';');
        p = p ? p + 1 : NULL;
    }
    if (!p || !*p)
        return 0;
    {
        size_t len = strcspn(p, ";"), eq = strcspn(p, "=;");
        size_t vl = eq < len ? eq : len, rl = eq < len ? len - eq - 1 : 0;
        snprintf(variant, 128, "%.*s", (int)(vl < 127 ? vl : 127), p);
        snprintf(roof, 128, "%.*s", (int)(rl < 127 ? rl : 127), eq < len ? p + eq + 1 : "");
    }
    return 1;
}

int kbi_roofs_check(const kb_plugin *d, char *err)
{
    char variant[128], roof[128];
    if (!has_1_4(d))
        return 0;
    if (d->headline && strcmp(d->headline, KBI_HEADLINE_RATE) != 0 &&
        strcmp(d->headline, KBI_HEADLINE_TIME_PER_ITEM) != 0) {
        kbi_errf(err, "headline '%s' is not a headline, expected rate or time_per_item",
                 d->headline);
        return -1;
    }
    for (size_t i = 0; d->roofs && roof_entry(d->roofs, i, variant, roof); i++) {
        int found = 0;
        for (int v = 0; v < d->n_variants && !found; v++)
            found = d->variants[v].name && strcmp(d->variants[v].name, variant) == 0;
        if (!found) {
            kbi_errf(err, "roofs names '%s', which is not one of the plugin's variants", variant);
            return -1;
        }
        if (!kbi_roof_known(roof)) {
            kbi_errf(err, "roofs gives %s the roof '%s', expected fp32, tf32, tf32x3 or memory",
                     variant, roof);
            return -1;
        }
        for (size_t k = 0; k < i; k++) {
            char v2[128], r2[128];
            roof_entry(d->roofs, k, v2, r2);
            if (strcmp(v2, variant) == 0) {
                kbi_errf(err, "roofs names the variant '%s' twice", variant);
                return -1;
            }
        }
    }
    return 0;
}

void kbi_roof_of(const kb_plugin *d, const char *variant, char *out, size_t n)
{
    char v[128], roof[128];
    snprintf(out, n, "%s", "");
    if (!has_1_4(d) || !d->roofs)
        return;
    for (size_t i = 0; roof_entry(d->roofs, i, v, roof); i++)
        if (strcmp(v, variant) == 0) {
            snprintf(out, n, "%s", roof);
            return;
        }
}
