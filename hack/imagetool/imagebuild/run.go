package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runIn runs argv in root the way `docker build` runs a RUN: in its own
// mount, PID, UTS and IPC namespaces (so every mount it needs, and every
// process it leaves behind, goes away when it ends), with /proc, /sys, a
// small /dev and the host's resolv.conf and hosts mounted, as user, in
// workdir, with exactly env. The network is the host's: apt reaches the
// Debian mirror.
func runIn(root, workdir, user string, env, argv []string) error {
	// Docker bind-mounts these over the image's; the files it has to
	// create for that are not part of the layer.
	var made []string
	for _, f := range []string{"etc/resolv.conf", "etc/hosts"} {
		if _, err := os.Lstat(filepath.Join(root, f)); os.IsNotExist(err) {
			made = append(made, filepath.Join(root, f))
		}
	}
	args := append([]string{"__run", root, workdir, user}, argv...)
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		Pdeathsig:  syscall.SIGKILL,
	}
	err := cmd.Run()
	for _, f := range made {
		if st, e := os.Lstat(f); e == nil && st.Mode().IsRegular() && st.Size() == 0 {
			_ = os.Remove(f)
		}
	}
	return err
}

// runHelper is the process inside the namespaces: it mounts what a RUN
// sees, enters the root and execs the command (becoming PID 1, so the
// kernel ends whatever the command leaves running).
func runHelper(args []string) error {
	root, workdir, user, argv := args[0], args[1], args[2], args[3:]
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	mkdir := func(p string) string {
		p = filepath.Join(root, p)
		_ = os.MkdirAll(p, 0o755)
		return p
	}
	if err := unix.Mount("proc", mkdir("proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	if err := unix.Mount("/sys", mkdir("sys"), "", unix.MS_BIND|unix.MS_REC, ""); err == nil {
		_ = unix.Mount("", filepath.Join(root, "sys"), "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
	}
	dev := mkdir("dev")
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID, "mode=755,size=65536k"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := filepath.Join(dev, d)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+d, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting /dev/%s: %w", d, err)
		}
	}
	for link, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"} {
		_ = os.Symlink(target, filepath.Join(dev, link))
	}
	_ = unix.Mount("devpts", mkdir("dev/pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
	_ = unix.Mount("shm", mkdir("dev/shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=65536k")
	for _, f := range []string{"etc/resolv.conf", "etc/hosts"} {
		p := filepath.Join(root, f)
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			_ = os.WriteFile(p, nil, 0o644)
		}
		if err := unix.Mount("/"+f, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting /%s: %w", f, err)
		}
	}
	_ = unix.Sethostname([]byte("buildkitsandbox"))
	uid, gid, groups, home, err := lookupUser(root, user)
	if err != nil {
		return err
	}
	if err := unix.Chroot(root); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := os.Chdir(workdir); err != nil {
		return fmt.Errorf("workdir: %w", err)
	}
	env := os.Environ()
	if os.Getenv("HOME") == "" {
		env = append(env, "HOME="+home)
	}
	if uid != 0 || gid != 0 {
		if err := unix.Setgroups(groups); err != nil {
			return err
		}
		if err := unix.Setgid(gid); err != nil {
			return err
		}
		if err := unix.Setuid(uid); err != nil {
			return err
		}
	}
	devnull, err := os.Open("/dev/null")
	if err != nil {
		return err
	}
	if err := unix.Dup2(int(devnull.Fd()), 0); err != nil {
		return err
	}
	path, err := lookPath(argv[0], os.Getenv("PATH"))
	if err != nil {
		return err
	}
	return unix.Exec(path, argv, env)
}

func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH %s", file, path)
}

// lookupUser resolves a USER value (name or uid, optionally :group) from
// the image's own /etc/passwd and /etc/group, as Docker does; a user
// without a group gets its primary group (or, by number, gid = uid).
func lookupUser(root, spec string) (uid, gid int, groups []int, home string, err error) {
	home = "/"
	if spec == "" {
		spec = "root"
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	passwd := readColon(filepath.Join(root, "etc/passwd"))
	uid = -1
	username := ""
	for _, f := range passwd {
		if len(f) >= 6 && (f[0] == name || f[2] == name) {
			uid, _ = strconv.Atoi(f[2])
			gid, _ = strconv.Atoi(f[3])
			home, username = f[5], f[0]
			break
		}
	}
	if uid < 0 {
		if uid, err = strconv.Atoi(name); err != nil {
			return 0, 0, nil, "", fmt.Errorf("user %s not in the image's /etc/passwd", name)
		}
		gid = uid
	}
	grp := readColon(filepath.Join(root, "etc/group"))
	if hasGroup {
		gid = -1
		for _, f := range grp {
			if len(f) >= 3 && (f[0] == group || f[2] == group) {
				gid, _ = strconv.Atoi(f[2])
			}
		}
		if gid < 0 {
			if gid, err = strconv.Atoi(group); err != nil {
				return 0, 0, nil, "", fmt.Errorf("group %s not in the image's /etc/group", group)
			}
		}
	}
	groups = []int{gid}
	for _, f := range grp {
		if len(f) >= 4 && username != "" {
			for _, m := range strings.Split(f[3], ",") {
				if m == username {
					g, _ := strconv.Atoi(f[2])
					groups = append(groups, g)
				}
			}
		}
	}
	return uid, gid, groups, home, nil
}

func readColon(p string) [][]string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, strings.Split(sc.Text(), ":"))
	}
	return out
}
