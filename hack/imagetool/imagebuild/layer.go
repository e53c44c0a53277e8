package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// entry is what a snapshot remembers of a path: enough to tell that an
// instruction changed it. ctime moves on any change of content, mode,
// owner or extended attributes (setcap), so it catches what mtime misses.
type entry struct {
	mode         fs.FileMode
	uid, gid     uint32
	size         int64
	mtime, ctime unix.Timespec
	ino          uint64
}

type snapshot map[string]entry

// snap walks the root filesystem (relative paths, "" excluded). The
// mount points of a RUN (/proc, /sys, /dev) are empty directories by then.
func snap(root string) (snapshot, error) {
	s := snapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s[rel] = entry{mode: info.Mode(), uid: st.Uid, gid: st.Gid, size: st.Size, mtime: st.Mtim, ctime: st.Ctim, ino: st.Ino}
		return nil
	})
	return s, err
}

// writeDiff writes to out an uncompressed layer tarball holding what
// changed from before to after in root: new and changed paths with their
// owners, modes, times and extended attributes (as PAX SCHILY.xattr
// records, so setcap's security.capability survives), hard links within
// the layer as links, and a whiteout for each removed path. It reports
// whether the layer holds anything.
func writeDiff(root string, before, after snapshot, out string) (bool, error) {
	var changed, removed []string
	for p, e := range after {
		if b, ok := before[p]; !ok || b != e {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; ok {
			continue
		}
		// Only the topmost removed path needs a whiteout; a path whose
		// parent became a file goes with it.
		if parent := filepath.Dir(p); parent != "." {
			if pa, ok := after[parent]; !ok || !pa.mode.IsDir() {
				continue
			}
		}
		removed = append(removed, p)
	}
	if len(changed) == 0 && len(removed) == 0 {
		return false, nil
	}
	sort.Strings(changed)
	sort.Strings(removed)
	f, err := os.Create(out)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	tw := tar.NewWriter(f)
	for _, p := range removed {
		wh := filepath.Join(filepath.Dir(p), ".wh."+filepath.Base(p))
		if err := tw.WriteHeader(&tar.Header{Name: wh, Typeflag: tar.TypeReg, Mode: 0o644, Format: tar.FormatPAX}); err != nil {
			return false, err
		}
	}
	links := map[uint64]string{}
	for _, p := range changed {
		if err := addPath(tw, root, p, links); err != nil {
			return false, fmt.Errorf("adding %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return false, err
	}
	return true, f.Close()
}

func addPath(tw *tar.Writer, root, rel string, links map[uint64]string) error {
	full := filepath.Join(root, rel)
	info, err := os.Lstat(full)
	if err != nil {
		return err
	}
	target := ""
	if info.Mode()&fs.ModeSymlink != 0 {
		if target, err = os.Readlink(full); err != nil {
			return err
		}
	}
	hdr, err := tar.FileInfoHeader(info, target)
	if err != nil {
		return err
	}
	st := info.Sys().(*syscall.Stat_t)
	hdr.Name = rel
	if info.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
	hdr.Uname, hdr.Gname = "", ""
	hdr.Format = tar.FormatPAX
	hdr.ModTime = info.ModTime()
	hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
	if info.Mode().IsRegular() && st.Nlink > 1 {
		if first, ok := links[st.Ino]; ok {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
		} else {
			links[st.Ino] = rel
		}
	}
	if xattrs, err := readXattrs(full); err != nil {
		return err
	} else if len(xattrs) > 0 {
		hdr.PAXRecords = map[string]string{}
		for k, v := range xattrs {
			hdr.PAXRecords["SCHILY.xattr."+k] = v
		}
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag != tar.TypeReg || hdr.Size == 0 {
		return nil
	}
	f, err := os.Open(full)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = io.Copy(tw, f)
	return err
}

func readXattrs(p string) (map[string]string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		if err == unix.ENOTSUP {
			return nil, nil
		}
		return nil, err
	}
	out := map[string]string{}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		val := make([]byte, 4096)
		m, err := unix.Lgetxattr(p, name, val)
		if err != nil {
			return nil, fmt.Errorf("xattr %s: %w", name, err)
		}
		out[name] = string(val[:m])
	}
	return out, nil
}
