#!/bin/sh
# Moment-ratio crossings of the labeling plugin's finite-size-scaling sweeps: from the
# results.csv of `kbench report` (no jq, POSIX awk), per dimension and per L a weighted
# quadratic fit of U = <m^4>/<m^2>^2 against T (errors: the declared metric's uncertainty),
# then for each pair of consecutive L the crossing T* of the two fits, the ratio U* there and
# 1/nu = ln(s2/s1)/ln(L2/L1) from the slopes at T*.  Errors by Monte Carlo: the points are
# redrawn from their errors (normal) and everything refitted, 400 times (fixed seed).
# With --plot DIR also a gnuplot chart per model and dimension (points with error bars, the
# fits, Tc and the universal ratio as reference lines): DIR/fss-<model>-<dim>d.{dat,gp,png,svg}.
#
#   kbench report RESULTS --out R --no-charts && plugins/labeling/crossing.sh R/results.csv
#   plugins/labeling/crossing.sh --plot charts R2/results.csv R3/results.csv
#
# Exit status: 0 done, 2 bad usage or no FSS data (3 or more T per L, 2 or more L).
set -eu

plot=""
if [ "${1:-}" = "--plot" ]; then
  [ $# -ge 2 ] || { echo "crossing.sh: --plot needs a folder" >&2; exit 2; }
  plot=$2
  shift 2
fi
if [ $# -lt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0
  exit 2
fi
[ -n "$plot" ] && mkdir -p "$plot"

awk -v plot="$plot" '
# Splits one CSV line (RFC 4180 quotes, no embedded newlines) into f[1..n]; returns n.
function csv_split(line, f,    n, i, c, q, cur) {
  n = 0; q = 0; cur = ""
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ } else q = 0
      } else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}
function gauss(    u, v) {
  u = rand(); v = rand()
  if (u < 1e-300) u = 1e-300
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v)
}
# Weighted least squares of y = a + b u + c u^2 (u = T - T0) over the points of curve k with
# values yy[k, i]; sets A[k], B[k], C[k] and returns chi^2 (-1 when singular).
function fit(k,    i, u, w, s0, s1, s2, s3, s4, t0, t1, t2, det, y, chi) {
  s0 = s1 = s2 = s3 = s4 = t0 = t1 = t2 = 0
  for (i = 1; i <= np[k]; i++) {
    u = T[k, i] - T0[dimof[k]]; w = 1 / (E[k, i] * E[k, i]); y = yy[k, i]
    s0 += w; s1 += w * u; s2 += w * u * u; s3 += w * u * u * u; s4 += w * u * u * u * u
    t0 += w * y; t1 += w * y * u; t2 += w * y * u * u
  }
  det = s0 * (s2 * s4 - s3 * s3) - s1 * (s1 * s4 - s3 * s2) + s2 * (s1 * s3 - s2 * s2)
  if (det == 0) return -1
  A[k] = (t0 * (s2 * s4 - s3 * s3) - s1 * (t1 * s4 - s3 * t2) + s2 * (t1 * s3 - s2 * t2)) / det
  B[k] = (s0 * (t1 * s4 - t2 * s3) - t0 * (s1 * s4 - s3 * s2) + s2 * (s1 * t2 - t1 * s2)) / det
  C[k] = (s0 * (s2 * t2 - s3 * t1) - s1 * (s1 * t2 - s2 * t1) + t0 * (s1 * s3 - s2 * s2)) / det
  chi = 0
  for (i = 1; i <= np[k]; i++) {
    u = T[k, i] - T0[dimof[k]]
    chi += ((yy[k, i] - A[k] - B[k] * u - C[k] * u * u) / E[k, i]) ^ 2
  }
  return chi
}
# Crossing of the fits of curves k1, k2 inside [lo, hi] (T units): sets XT, XU, XI (1/nu);
# returns 1 when found.  Of two roots, the one nearer the middle of the window.
function cross(k1, k2, lo, hi,    a, b, c, d, r1, r2, u, mid, t0, s1, s2, found) {
  t0 = T0[dimof[k1]]
  a = C[k2] - C[k1]; b = B[k2] - B[k1]; c = A[k2] - A[k1]
  lo -= t0; hi -= t0; mid = (lo + hi) / 2; found = 0
  if (a == 0 || (a * a < 1e-30 * (b * b + 1e-300))) {
    if (b == 0) return 0
    r1 = -c / b; r2 = r1
  } else {
    d = b * b - 4 * a * c
    if (d < 0) return 0
    r1 = (-b + sqrt(d)) / (2 * a); r2 = (-b - sqrt(d)) / (2 * a)
  }
  if (r1 >= lo && r1 <= hi) { u = r1; found = 1 }
  if (r2 >= lo && r2 <= hi && (!found || (r2 - mid) ^ 2 < (u - mid) ^ 2)) { u = r2; found = 1 }
  if (!found) return 0
  XT = t0 + u
  XU = A[k1] + B[k1] * u + C[k1] * u * u
  s1 = B[k1] + 2 * C[k1] * u; s2 = B[k2] + 2 * C[k2] * u
  XI = (s1 > 0 && s2 > 0) ? log(s2 / s1) / log(Lv[k2] / Lv[k1]) : "nan"
  return 1
}
function sort_num(arr, n,    i, j, t) {
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && arr[j - 1] + 0 > arr[j] + 0; j--) { t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
}
FNR == 1 {
  n = csv_split($0, h)
  delete col
  for (i = 1; i <= n; i++) col[h[i]] = i
  if (!("param_L" in col) || !("param_T" in col) || !("metric_moment_ratio" in col)) {
    printf "crossing.sh: %s: no param_L, param_T or metric_moment_ratio column\n", FILENAME > "/dev/stderr"
    bad = 1; skip = FILENAME
  }
  next
}
FILENAME == skip { next }
{
  n = csv_split($0, f)
  if (f[col["plugin"]] != "labeling" || f[col["status"]] != "ok") next
  u = f[col["metric_moment_ratio"]]; e = f[col["metric_moment_ratio_uncertainty"]]
  if (u == "" || e == "" || e + 0 <= 0) next
  d = f[col["param_dim"]]; L = f[col["param_L"]]; t = f[col["param_T"]] + 0
  if (t == 0) next                     # T = 0: "at Tc" timing cases, not a sweep point
  model = f[col["param_model"]]; q = f[col["param_q"]]
  k = model "|" q "|" d "|" L
  if ((k, t) in seen) next             # every variant evolves the same lattice: once
  seen[k, t] = 1
  if (!(k in np)) { np[k] = 0; keys[++nk] = k; dimof[k] = model "|" q "|" d; Lv[k] = L + 0 }
  i = ++np[k]; T[k, i] = t; U[k, i] = u + 0; E[k, i] = e + 0
  v = f[col["variant"]]
  if (index(" " vars[dimof[k]] " ", " " v " ") == 0) vars[dimof[k]] = vars[dimof[k]] (vars[dimof[k]] == "" ? "" : " ") v
}
END {
  if (bad) exit 2
  R = 400
  # Groups (model, q, dim), each with its L sorted, and T0 = the mean T of the group.
  for (j = 1; j <= nk; j++) {
    k = keys[j]
    if (np[k] < 3) continue
    g = dimof[k]
    if (!(g in ng)) { ng[g] = 0; groups[++ngroups] = g }
    gl[g, ++ng[g]] = Lv[k]; kof[g, Lv[k]] = k
    for (i = 1; i <= np[k]; i++) { tsum[g] += T[k, i]; tcnt[g]++ }
  }
  if (!ngroups) { print "crossing.sh: no sweep with 3 or more T per L" > "/dev/stderr"; exit 2 }
  for (gi = 1; gi <= ngroups; gi++) {
    g = groups[gi]; T0[g] = tsum[g] / tcnt[g]
    srand(12345)                       # the same replicas whatever else the files hold
    for (i = 1; i <= ng[g]; i++) ls[i] = gl[g, i]
    sort_num(ls, ng[g])
    split(g, gp, "|")
    printf "%s, q = %s, dim = %s (T0 = %.6g)\n", gp[1], gp[2], gp[3], T0[g]
    printf "  %-6s %6s %10s %18s %8s\n", "L", "points", "T range", "U(T0) fit", "chi2/dof"
    for (i = 1; i <= ng[g]; i++) {
      k = kof[g, ls[i]]
      for (m = 1; m <= np[k]; m++) yy[k, m] = U[k, m]
      chi = fit(k)
      lo = hi = T[k, 1]
      for (m = 2; m <= np[k]; m++) { if (T[k, m] < lo) lo = T[k, m]; if (T[k, m] > hi) hi = T[k, m] }
      klo[k] = lo; khi[k] = hi; A0[k] = A[k]; B0[k] = B[k]; C0[k] = C[k]
      # the error of U(T0) from the replicas below; the fit value now
      s = ss = 0
      for (r = 1; r <= R; r++) {
        for (m = 1; m <= np[k]; m++) yy[k, m] = U[k, m] + E[k, m] * gauss()
        fit(k); s += A[k]; ss += A[k] * A[k]
      }
      A[k] = A0[k]; B[k] = B0[k]; C[k] = C0[k]
      printf "  %-6d %6d %10s %10.5f(%6.5f) %8s\n", ls[i], np[k], sprintf("%.5g-%.5g", lo, hi), A0[k],
        sqrt(ss / R - (s / R) ^ 2), (np[k] > 3 ? sprintf("%.2f", chi / (np[k] - 3)) : "-")
    }
    printf "  %-11s %22s %20s %16s %s\n", "pair", "T* (crossing)", "U* (ratio there)", "1/nu", "(replicas without a crossing)"
    for (i = 1; i < ng[g]; i++) {
      k1 = kof[g, ls[i]]; k2 = kof[g, ls[i + 1]]
      lo = klo[k1] > klo[k2] ? klo[k1] : klo[k2]; hi = khi[k1] < khi[k2] ? khi[k1] : khi[k2]
      A[k1] = A0[k1]; B[k1] = B0[k1]; C[k1] = C0[k1]; A[k2] = A0[k2]; B[k2] = B0[k2]; C[k2] = C0[k2]
      if (!cross(k1, k2, lo, hi)) {
        printf "  %5d-%-5d  no crossing of the fits in T = %.6g ... %.6g\n", ls[i], ls[i + 1], lo, hi
        continue
      }
      t0x = XT; u0x = XU; i0x = XI
      st = sst = su = ssu = si = ssi = nr = ni = 0
      for (r = 1; r <= R; r++) {
        for (m = 1; m <= np[k1]; m++) yy[k1, m] = U[k1, m] + E[k1, m] * gauss()
        for (m = 1; m <= np[k2]; m++) yy[k2, m] = U[k2, m] + E[k2, m] * gauss()
        fit(k1); fit(k2)
        if (!cross(k1, k2, lo, hi)) continue
        nr++; st += XT; sst += XT * XT; su += XU; ssu += XU * XU
        if (XI != "nan") { ni++; si += XI; ssi += XI * XI }
      }
      et = nr > 1 ? sqrt(sst / nr - (st / nr) ^ 2) : 0
      eu = nr > 1 ? sqrt(ssu / nr - (su / nr) ^ 2) : 0
      ei = ni > 1 ? sqrt(ssi / ni - (si / ni) ^ 2) : 0
      printf "  %5d-%-5d %12.6f(%8.6f) %11.5f(%7.5f) %8s(%6.3f) %d of %d\n", ls[i], ls[i + 1], t0x, et,
        u0x, eu, (i0x == "nan" ? "nan" : sprintf("%.3f", i0x)), ei, R - nr, R
      A[k1] = A0[k1]; B[k1] = B0[k1]; C[k1] = C0[k1]; A[k2] = A0[k2]; B[k2] = B0[k2]; C[k2] = C0[k2]
    }
    if (plot != "") write_plot(g, gp[3])
  }
}
# DIR/fss-<model>-<dim>d.dat (one block per L: T U err) and .gp (points, fits, references).
function write_plot(g, d,    stem, dat, gpf, i, k, m, tc, uc, sep, ising) {
  stem = plot "/fss-" gp[1] "-" d "d"; dat = stem ".dat"; gpf = stem ".gp"
  printf "" > dat
  for (i = 1; i <= ng[g]; i++) {
    k = kof[g, ls[i]]
    printf "# L = %d\n", ls[i] >> dat
    for (m = 1; m <= np[k]; m++) printf "%.8g %.8g %.8g\n", T[k, m], U[k, m], E[k, m] >> dat
    printf "\n\n" >> dat
  }
  close(dat)
  # Reference lines: Ising Tc and the universal ratio (periodic); 3-D XY its Tc only.
  ising = gp[1] == "ising"
  tc = d == 2 ? 2.269185314 : 4.5115; uc = d == 2 ? 1.168 : 1.604
  if (gp[1] == "xy" && d == 3) {
    printf "set arrow from 2.2018, graph 0 to 2.2018, graph 1 nohead dt 2 lc rgb \"gray40\"\n" > gpf
    printf "set label \"Tc = 2.2018\" at 2.2018, graph 0.95 right offset -0.5,0 tc rgb \"gray40\"\n" >> gpf
  } else printf "" > gpf
  print "set terminal pngcairo size 900,640 noenhanced" >> gpf
  printf "set output \"%s.png\"\n", stem >> gpf
  printf "set title \"labeling (%s): <m^4>/<m^2>^2 against T, %s-D %s, one line per L; lines: quadratic fits\"\n", vars[g], d, gp[1] >> gpf
  print "set xlabel \"T (J)\"; set ylabel \"<m^4>/<m^2>^2; bars: 1 standard error\"; set key top left; set grid; set samples 500" >> gpf
  if (ising) {
    printf "set arrow from %.8g, graph 0 to %.8g, graph 1 nohead dt 2 lc rgb \"gray40\"\n", tc, tc >> gpf
    printf "set label \"Tc = %.6g\" at %.8g, graph 0.95 right offset -0.5,0 tc rgb \"gray40\"\n", tc, tc >> gpf
    printf "set arrow from graph 0, first %.5g to graph 1, first %.5g nohead dt 3 lc rgb \"gray40\"\n", uc, uc >> gpf
    printf "set label \"U* = %.4g\" at graph 0.98, first %.5g right offset 0,0.7 tc rgb \"gray40\"\n", uc, uc >> gpf
  }
  sep = "plot "
  for (i = 1; i <= ng[g]; i++) {
    k = kof[g, ls[i]]
    printf "%s\"%s\" index %d using 1:2:3 with yerrorbars pt 7 ps 0.8 lc %d title \"L = %d\"", sep, dat, i - 1, i, ls[i] >> gpf
    sep = ", \\\n     "
    printf "%s(x >= %.8g && x <= %.8g) ? %.10g + %.10g*(x-%.10g) + %.10g*(x-%.10g)**2 : 1/0 with lines lc %d notitle", sep,
      klo[k], khi[k], A0[k], B0[k], T0[g], C0[k], T0[g], i >> gpf
  }
  print "" >> gpf
  print "set terminal svg size 900,640 noenhanced" >> gpf
  printf "set output \"%s.svg\"\n", stem >> gpf
  print "replot" >> gpf
  close(gpf)
  printf "  plot: %s (gnuplot %s)\n", dat, gpf
}
' "$@"
status=$?
if [ -n "$plot" ] && command -v gnuplot >/dev/null 2>&1; then
  for g in "$plot"/fss-*d.gp; do [ -f "$g" ] && gnuplot "$g"; done
fi
exit $status
