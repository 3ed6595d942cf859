#!/usr/bin/env bash
# kbench's mean power of the one case in RESULTS (steady.ini) against the mean of the
# nvidia-smi samples in POWER.csv (power.draw, W) taken while it ran: the samples above the
# midpoint between the board's idle power and kbench's figure, less the first and last 1 s of
# them (the ramps at the window's ends).
#   lab/h200/energy/compare-power.sh RESULTS.jsonl POWER.csv
set -eu
results=$1 csv=$2
idle=$(grep '"record":"env"' "$results" | sed -n 's/.*"idle_w":\([0-9.e+-]*\).*/\1/p' | head -1)
watts=$(grep '"record":"case"' "$results" | sed -n 's/.*"energy":{[^}]*"watts":\([0-9.e+-]*\).*/\1/p' | head -1)
echo "kbench: idle ${idle:-?} W, case ${watts:-?} W"
awk -F', *' -v idle="${idle:-0}" -v w="${watts:-0}" '
  NR > 1 { gsub(/ W/, "", $2); if ($2 + 0 > (idle + w) / 2) { p[n++] = $2 + 0 } }
  END {
    skip = 10; s = 0; k = 0
    for (i = skip; i < n - skip; i++) { s += p[i]; k++ }
    if (k == 0) { print "nvidia-smi: no samples in the window"; exit 1 }
    printf "nvidia-smi: %d samples, mean %.1f W; kbench/nvidia-smi = %.3f\n", k, s / k, w / (s / k)
  }' "$csv"
