// Package auditchain seals the lines of a hash-chained audit log: each line is a JSON object
// that carries prev, the hash of the line before it (null on the first), and ends with hash,
// the sha256 of the line as it is without that field. fr-approve's --audit file and the
// fleet's audit stream are both such chains, verified by the same reader.
package auditchain

import (
	"crypto/sha256"
	"encoding/hex"
)

// HashSuffix is what precedes the hash at the end of a sealed line.
const HashSuffix = `,"hash":"`

// HashLen is len("sha256:") plus 64 hex digits.
const HashLen = 7 + 64

// Hash is "sha256:" and the hex sha256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Seal appends the hash field to a marshalled record body ({...}, its prev already set).
func Seal(body []byte) (line []byte, hash string) {
	hash = Hash(body)
	line = make([]byte, 0, len(body)+len(HashSuffix)+len(hash)+2)
	line = append(line, body[:len(body)-1]...)
	line = append(line, HashSuffix...)
	line = append(line, hash...)
	line = append(line, '"', '}')
	return line, hash
}

// HashOf returns the hash a sealed line ends with, or "" when it does not end with one. It
// does not check it.
func HashOf(line []byte) string {
	tail := len(HashSuffix) + HashLen + 2
	if len(line) < tail+1 || string(line[len(line)-2:]) != `"}` ||
		string(line[len(line)-tail:len(line)-tail+len(HashSuffix)]) != HashSuffix {
		return ""
	}
	return string(line[len(line)-HashLen-2 : len(line)-2])
}
