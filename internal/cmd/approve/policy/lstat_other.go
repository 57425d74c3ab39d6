//go:build !unix

package policy

import "os"

// lstatName says what the name p is, without following a symbolic link: whether it exists, and
// whether it is a link or a directory. ok is false when that could not be found out.
func lstatName(p string) (exists, link, dir, ok bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return false, false, false, os.IsNotExist(err)
	}
	return true, fi.Mode()&os.ModeSymlink != 0, fi.IsDir(), true
}
