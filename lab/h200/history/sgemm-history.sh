#!/bin/sh
# `kbench history` over every version of the H200 sgemm reference that git holds
# (baselines/h200/sgemm/results.jsonl, and the second run of the same revision committed beside
# it as fresh.jsonl), written into this folder: history.md, summary.txt (what history printed)
# and three of its charts.  Nothing is measured; the inputs come out of git into a scratch folder.
#
#   lab/h200/history/sgemm-history.sh [KBENCH]     (from the repository root; build/kbench)
set -eu
kbench=$(realpath "${1:-build/kbench}")
here=lab/h200/history
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for path in baselines/h200/sgemm/results.jsonl baselines/h200/sgemm/fresh.jsonl; do
    # Only the commits that added or changed the file (one that deleted it has none to show).
    for rev in $(git log --diff-filter=AM --format=%h -- "$path"); do
        suffix=$([ "${path##*/}" = fresh.jsonl ] && echo -fresh || true)
        git show "$rev:$path" >"$work/$rev$suffix.jsonl"
    done
done

# Relative paths, so the report names each input by its commit and not by the scratch folder.
cd "$work"
status=0
"$kbench" history --out out ./*.jsonl >summary.txt || status=$?
# The table without links to the 73 charts, of which only three are kept here.
"$kbench" history --out out-md --no-charts ./*.jsonl >/dev/null || true
cd - >/dev/null

cp "$work/out-md/history.md" "$here/history.md"
cp "$work/summary.txt" "$here/summary.txt"
mkdir -p "$here/charts"
rm -f "$here"/charts/*.png
for stem in history-sgemm-changed \
    history-sgemm-048-tf32x3_shape_8192x8192x8192_alpha_1_beta_0.5 \
    history-sgemm-072-tf32x3_shape_256x4096x4096_alpha_1_beta_0.5; do
    cp "$work/out/charts/$stem.png" "$here/charts/"
done
echo "kbench history exited $status; wrote $here/history.md, summary.txt, charts/"
exit "$status"
