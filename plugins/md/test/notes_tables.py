#!/usr/bin/env python3
"""Prints the figures HISTORY.md's tables take from one run of profiles/md.ini.

    python3 plugins/md/test/notes_tables.py results/md/results.jsonl

One line per case (atom-steps/s of the hot median and the metrics the tables quote), then
the ratios the issue asks for: layer_matrix / cell_block per size (Table 3) and the read-only
cache pair (Table 8: ldg 0 with l1 0, and the control ldg 0 with l1 1, against ldg 1, as ratios
of the hot medians: > 1 is slower).  Reads only the file it is given.
"""
import json
import sys

KEYS = [("neighbors_per_atom", "Np/Na", "%.2f"), ("layers", "Nl", "%.2f"),
        ("steps_per_rebuild", "Nu", "%.2f"), ("t_nbr_fraction", "tn", "%.3f"),
        ("t_force_fraction", "tf", "%.3f"), ("t_host_layers_fraction", "th", "%.3f"),
        ("t_build_kernel_fraction", "tb", "%.3f"), ("build_kernel_ns_per_atom", "b_ns", "%.2f"),
        ("host_layers_ns_per_atom", "h_ns", "%.2f"), ("host_wait_ns_per_atom", "hw_ns", "%.2f"),
        ("host_loop_ns_per_atom", "hl_ns", "%.2f"), ("host_c_copy_gbs", "c_GBs", "%.1f"),
        ("host_l_copy_gbs", "l_GBs", "%.1f"), ("bytes_per_atom", "B", "%.1f"),
        ("energy_drift", "drift", "%.1e"), ("potential_energy", "U", "%.5f"),
        ("pressure", "P", "%.4f"), ("kinetic_energy", "K", "%.5f"), ("temperature", "T", "%.5f"),
        ("eos_u_ref", "U_eos", "%.5f"), ("eos_p_ref", "P_eos", "%.5f"),
        ("eos_u_dev", "U_dev", "%+.1f"), ("eos_p_dev", "P_dev", "%+.1f")]


def main(path):
    cases = []
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("record") == "case":
                cases.append(rec)
    rate = {}
    med = {}
    for c in cases:
        p = c["params"]
        m = {k: v["value"] for k, v in c.get("metrics", {}).items()}
        ips = (c.get("rates") or {}).get("items_per_s", 0.0)
        key = (p["system"], p["N_e"], p["steps"], p["delta"], p["threads"], p["reorder"],
               p["ldg"], p["shuffle"], p["equil"])
        if p.get("l1", 1) == 1 and not p.get("shifted", 0):
            rate.setdefault((c["variant"],) + key, ips)  # a point repeated later: the first
        med.setdefault((c["variant"], p["system"], p["N_e"], p["steps"], p["reorder"], p["ldg"],
                        p.get("l1", 1)), []).append(c["stats"]["median"] * 1e3)
        cols = " ".join("%s=%s" % (short, fmt % m[k]) for k, short, fmt in KEYS if k in m)
        print("%-13s %-5s Ne=%-3d st=%-5d d=%-3g th=%-3d ro=%-3d ldg=%d l1=%d sh=%d eq=%-4d "
              "shifted=%d %-8s %-6s %.4g  %s"
              % (c["variant"], p["system"], p["N_e"], p["steps"], p["delta"], p["threads"],
                 p["reorder"], p["ldg"], p.get("l1", 1), p["shuffle"], p["equil"],
                 p.get("shifted", 0), c.get("timing", "-"), c.get("status", "-"), ips, cols))
    print("\nlayer_matrix / cell_block (same point):")
    for k, v in sorted(rate.items()):
        if k[0] == "layer_matrix" and ("cell_block",) + k[1:] in rate:
            cb = rate[("cell_block",) + k[1:]]
            if cb > 0:
                print("  %-5s N_e=%-3d steps=%-4d %.3f" % (k[1], k[2], k[3], v / cb))
    print("\nread-only cache: ms per sample (every repeat), ratios to the mean of ldg 1's:")
    for k, base in sorted(med.items()):
        if k[5] != 1 or k[6] != 1:
            continue
        b = sum(base) / len(base)
        for ldg, l1, name in ((0, 1, "ldg 0 l1 1 (control)"), (0, 0, "ldg 0 l1 0 (uncached)")):
            other = med.get(k[:5] + (ldg, l1))
            if other:
                print("  %-13s %-3s N_e=%-3d steps=%-5d N_R=%-3d ldg 1 %s  %s %s: %s"
                      % (k[0], k[1], k[2], k[3], k[4], "/".join("%.2f" % x for x in base), name,
                         "/".join("%.2f" % x for x in other),
                         "/".join("%.3f" % (x / b) for x in other)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
