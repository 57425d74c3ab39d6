package policy

// The argv matcher as it was before argvMatch: a search that tries every split of the words
// among the **s of a pattern (exponential in their number). Kept to check that argvMatch
// decides the same (TestArgvMatchSameAsSearch, FuzzArgvMatch).

func (c *CmdPattern) oldMatchFrom(p *Part, allow bool, pi, wi int) bool {
	for pi < len(c.Words) {
		pw := c.Words[pi]
		if pw == nil { // **
			for k := wi; k <= len(p.Words); k++ {
				if c.oldMatchFrom(p, allow, pi+1, k) {
					return true
				}
			}
			return false
		}
		if wi >= len(p.Words) {
			return false
		}
		if !wordMatch(pw, p, wi, allow) {
			return false
		}
		pi++
		wi++
	}
	return !c.Anchored || wi == len(p.Words)
}

// oldMatchNamed matches an allow pattern like matchFrom, and also returns the words (bits, the
// first 64) it matched with a word that names them: a literal, or a glob beginning with two
// literal characters (-o*, --output=*).
func (c *CmdPattern) oldMatchNamed(p *Part, pi, wi int, named uint64) (bool, uint64) {
	for pi < len(c.Words) {
		pw := c.Words[pi]
		if pw == nil { // **
			for k := wi; k <= len(p.Words); k++ {
				if ok, n := c.oldMatchNamed(p, pi+1, k, named); ok {
					return true, n
				}
			}
			return false, 0
		}
		if wi >= len(p.Words) || !wordMatch(pw, p, wi, true) {
			return false, 0
		}
		if pw.names() && wi < 64 {
			named |= 1 << wi
		}
		pi++
		wi++
	}
	return !c.Anchored || wi == len(p.Words), named
}
