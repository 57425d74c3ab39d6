package report

import "sort"

func sortStrings(s []string) { sort.Strings(s) }
