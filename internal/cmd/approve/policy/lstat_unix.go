//go:build unix

package policy

import "golang.org/x/sys/unix"

// lstatName says what the name p is, without following a symbolic link: whether it exists, and
// whether it is a link or a directory. ok is false when that could not be found out.
func lstatName(p string) (exists, link, dir, ok bool) {
	var st unix.Stat_t
	for {
		err := unix.Lstat(p, &st)
		switch err {
		case nil:
			t := st.Mode & unix.S_IFMT
			return true, t == unix.S_IFLNK, t == unix.S_IFDIR, true
		case unix.EINTR:
			continue
		case unix.ENOENT, unix.ENOTDIR:
			return false, false, false, true
		}
		return false, false, false, false
	}
}
