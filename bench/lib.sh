# Helpers shared by bench/run.sh and bench/scale.sh (sourced): reading the
# "key value" lines the bench programs print, medians, and awk arithmetic.

# val KEY FILE -> the value after "KEY " in FILE (first match), or empty
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }

# median V... -> the median of the numeric arguments (empty if none)
median() {
    printf '%s\n' "$@" | grep -E '^-?[0-9.]+(e[-+]?[0-9]+)?$' | sort -g |
        awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2];
                                  else printf "%.6g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# calc FORMAT A B EXPR -> awk's printf FORMAT of EXPR over a and b; "n/a"
# when either is empty
calc() { awk -v a="$2" -v b="$3" "BEGIN { if (a == \"\" || b == \"\") print \"n/a\"; else printf \"$1\", $4 }"; }
