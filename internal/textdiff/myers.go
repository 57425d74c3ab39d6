// Package textdiff is Myers' greedy forward search for the shortest edit script between two
// sequences (E. Myers, "An O(ND) difference algorithm and its variations", 1986): fr-approve's
// changed-line counts and the rendered diffs of file writes both run on it.
package textdiff

// Search finds the edit distance from a to b (the fewest insertions and deletions), looking
// no further than maxD. After each distance d it calls round, when not nil, with v, where
// v[off+k] (off = maxD+1) is the furthest x reached on diagonal k = x-y for k in -d..d, and
// the work done so far (the matching steps taken plus the diagonals tried); round returning
// false stops the search. Search returns the distance, or -1 when it is past maxD or round
// stopped the search.
func Search[T comparable](a, b []T, maxD int, round func(d int, v []int, work int) bool) int {
	n, m := len(a), len(b)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	work := 0
	for d := 0; d <= maxD; d++ {
		found := false
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
				work++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
		work += d + 1
		if round != nil && !round(d, v, work) {
			return -1
		}
		if found {
			return d
		}
	}
	return -1
}
