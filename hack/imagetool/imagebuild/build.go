package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// stage is one FROM section being built: its image so far, the root
// filesystem the instructions change, and the variables in scope.
type stage struct {
	name    string
	img     v1.Image
	cfg     v1.Config
	root    string
	args    map[string]string // ARGs declared in this stage, with values
	argKeys []string
	snap    snapshot
	cmdSet  bool
	history []v1.History
	layers  []string
}

type builder struct {
	store     *store
	bases     map[string]string // normalized ref -> root filesystem tarball
	context   string
	buildArgs map[string]string
	work      string
	stages    []*stage
	nlayer    int
}

// build executes the Dockerfile and returns its last stage's image.
func (b *builder) build(dockerfile string) (v1.Image, error) {
	ins, err := parseDockerfile(dockerfile)
	if err != nil {
		return nil, err
	}
	global := map[string]string{}
	var st *stage
	for _, in := range ins {
		if st == nil && in.cmd == "ARG" {
			for _, kv := range argDecls(in.args) {
				if v, ok := b.buildArgs[kv[0]]; ok {
					kv[1] = v
				}
				global[kv[0]] = expand(kv[1], global)
			}
			continue
		}
		if in.cmd == "FROM" {
			if st != nil {
				if err := b.finish(st); err != nil {
					return nil, err
				}
			}
			if st, err = b.from(in, global); err != nil {
				return nil, fmt.Errorf("line %d: %w", in.line, err)
			}
			b.stages = append(b.stages, st)
			continue
		}
		if st == nil {
			return nil, fmt.Errorf("line %d: %s before FROM", in.line, in.cmd)
		}
		if err := b.step(st, in, global); err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", in.line, in.cmd, err)
		}
	}
	if st == nil {
		return nil, fmt.Errorf("no FROM in %s", dockerfile)
	}
	if err := b.finish(st); err != nil {
		return nil, err
	}
	return st.img, nil
}

// argDecls parses ARG's NAME[=default] list; a NAME without a default
// has no value unless --build-arg gives one (marked by a nil-like "\x00").
func argDecls(args string) [][2]string {
	var out [][2]string
	for _, w := range words(args) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			v = "\x00"
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

func (b *builder) from(in instruction, global map[string]string) (*stage, error) {
	ws := strings.Fields(expand(in.args, global))
	st := &stage{args: map[string]string{}}
	if len(ws) == 3 && strings.EqualFold(ws[1], "as") {
		st.name = strings.ToLower(ws[2])
	} else if len(ws) != 1 {
		return nil, fmt.Errorf("FROM %s: want IMAGE [AS NAME]", in.args)
	}
	img, err := b.resolve(ws[0])
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	st.img, st.cfg, st.history = img, *cf.Config.DeepCopy(), append([]v1.History{}, cf.History...)
	b.nlayer++
	st.root = filepath.Join(b.work, fmt.Sprintf("stage%d", len(b.stages)))
	if err := extract(img, st.root); err != nil {
		return nil, fmt.Errorf("extracting %s: %w", ws[0], err)
	}
	st.snap, err = snap(st.root)
	return st, err
}

// resolve finds FROM's image: a base made from a root filesystem tarball
// (debian:trixie from debootstrap), an image built earlier into the store,
// or an earlier stage of this Dockerfile.
func (b *builder) resolve(ref string) (v1.Image, error) {
	for _, s := range b.stages {
		if s.name != "" && s.name == strings.ToLower(ref) {
			return s.img, nil
		}
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	if tarPath, ok := b.bases[r.Name()]; ok {
		return baseImage(tarPath)
	}
	return b.store.image(r.Name())
}

// baseImage is a Debian root filesystem as the image Docker Hub's
// debian:TAG is: one layer, PATH set, bash as its command.
func baseImage(tarPath string) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(tarPath, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(tarPath)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: st.ModTime()}, CreatedBy: "# debootstrap --variant=minbase (hack/images)",
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: st.ModTime()}
	cf.Config = v1.Config{Env: []string{defaultPath}, Cmd: []string{"bash"}}
	return mutate.ConfigFile(img, cf)
}

// extract unpacks the image's flattened file system (whiteouts applied)
// into dir, with owners, modes and extended attributes.
func extract(img v1.Image, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	cmd := exec.Command("tar", "-x", "-p", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-C", dir, "-f", "-")
	cmd.Stdin, cmd.Stderr = rc, os.Stderr
	return cmd.Run()
}

// vars is what ${...} sees in a stage: its ARGs, overridden by its ENV.
func (st *stage) vars() map[string]string {
	v := map[string]string{}
	for k, val := range st.args {
		v[k] = val
	}
	for _, e := range st.cfg.Env {
		k, val, _ := strings.Cut(e, "=")
		v[k] = val
	}
	return v
}

// runEnv is a RUN's environment: the image's ENV, then the stage's ARGs
// that ENV does not set (Docker passes build args to RUN, not to the image).
func (st *stage) runEnv() []string {
	env := append([]string{}, st.cfg.Env...)
	set := map[string]bool{}
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		set[k] = true
	}
	for _, k := range st.argKeys {
		if !set[k] {
			env = append(env, k+"="+st.args[k])
		}
	}
	if !set["PATH"] {
		env = append(env, defaultPath)
	}
	return env
}

func (b *builder) step(st *stage, in instruction, global map[string]string) error {
	vars := st.vars()
	created := "" // history text
	switch in.cmd {
	case "ARG":
		for _, kv := range argDecls(in.args) {
			k, v := kv[0], kv[1]
			if bv, ok := b.buildArgs[k]; ok {
				v = bv
			} else if v == "\x00" {
				g, ok := global[k]
				if !ok || g == "\x00" {
					continue
				}
				v = g
			} else {
				v = expand(v, vars)
			}
			if _, seen := st.args[k]; !seen {
				st.argKeys = append(st.argKeys, k)
			}
			st.args[k] = v
		}
		created = "ARG " + in.args
	case "ENV":
		for _, kv := range keyValues(in.args, true) {
			setEnv(&st.cfg, kv[0], expand(kv[1], vars))
			vars = st.vars()
		}
		created = "ENV " + in.args
	case "LABEL":
		if st.cfg.Labels == nil {
			st.cfg.Labels = map[string]string{}
		}
		for _, kv := range keyValues(in.args, false) {
			st.cfg.Labels[expand(kv[0], vars)] = expand(kv[1], vars)
		}
		created = "LABEL " + in.args
	case "EXPOSE":
		if st.cfg.ExposedPorts == nil {
			st.cfg.ExposedPorts = map[string]struct{}{}
		}
		for _, p := range words(expand(in.args, vars)) {
			if !strings.Contains(p, "/") {
				p += "/tcp"
			}
			st.cfg.ExposedPorts[p] = struct{}{}
		}
		created = "EXPOSE map[" + in.args + "]"
	case "USER":
		st.cfg.User = expand(in.args, vars)
		created = "USER " + st.cfg.User
	case "WORKDIR":
		dir := expand(in.args, vars)
		if !path.IsAbs(dir) {
			dir = path.Join(workdir(st), dir)
		}
		st.cfg.WorkingDir = dir
		if err := os.MkdirAll(filepath.Join(st.root, dir), 0o755); err != nil {
			return err
		}
		return b.commit(st, "WORKDIR "+dir)
	case "ENTRYPOINT":
		st.cfg.Entrypoint = jsonOrShell(in.args)
		// Docker: an ENTRYPOINT resets a CMD inherited from the base image.
		if !st.cmdSet {
			st.cfg.Cmd = nil
		}
		created = "ENTRYPOINT " + fmt.Sprint(st.cfg.Entrypoint)
	case "CMD":
		st.cfg.Cmd = jsonOrShell(in.args)
		st.cmdSet = true
		created = "CMD " + fmt.Sprint(st.cfg.Cmd)
	case "RUN":
		if len(in.flags) > 0 {
			return fmt.Errorf("RUN flags are not supported: %v", in.flags)
		}
		argv := jsonOrShell(in.args)
		fmt.Fprintf(os.Stderr, ">> [%s] RUN %s\n", st.display(), in.args)
		if err := runIn(st.root, workdir(st), st.cfg.User, st.runEnv(), argv); err != nil {
			return fmt.Errorf("RUN %s: %w", in.args, err)
		}
		return b.commit(st, "RUN "+strings.Join(argv, " ")+" # buildkit")
	case "COPY":
		if err := b.copy(st, in, vars); err != nil {
			return err
		}
		return b.commit(st, "COPY "+in.args+" # buildkit")
	default:
		return fmt.Errorf("instruction %s is not supported by this builder", in.cmd)
	}
	st.history = append(st.history, v1.History{Created: v1.Time{Time: time.Now().UTC()}, CreatedBy: created + " # buildkit", EmptyLayer: true})
	return nil
}

func (st *stage) display() string {
	if st.name != "" {
		return st.name
	}
	return "stage"
}

func workdir(st *stage) string {
	if st.cfg.WorkingDir == "" {
		return "/"
	}
	return st.cfg.WorkingDir
}

func setEnv(cfg *v1.Config, k, v string) {
	for i, e := range cfg.Env {
		if strings.HasPrefix(e, k+"=") {
			cfg.Env[i] = k + "=" + v
			return
		}
	}
	cfg.Env = append(cfg.Env, k+"="+v)
}

// commit turns what the last instruction changed in the root filesystem
// into a layer of the stage's image, as Docker makes one per RUN, COPY
// and WORKDIR.
func (b *builder) commit(st *stage, createdBy string) error {
	after, err := snap(st.root)
	if err != nil {
		return err
	}
	b.nlayer++
	out := filepath.Join(b.work, fmt.Sprintf("layer%d.tar", b.nlayer))
	nonEmpty, err := writeDiff(st.root, st.snap, after, out)
	if err != nil {
		return err
	}
	st.snap = after
	h := v1.History{Created: v1.Time{Time: time.Now().UTC()}, CreatedBy: createdBy}
	if !nonEmpty {
		h.EmptyLayer = true
		st.history = append(st.history, h)
		return nil
	}
	st.layers = append(st.layers, out)
	layer, err := tarball.LayerFromFile(out, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return err
	}
	st.img, err = mutate.Append(st.img, mutate.Addendum{Layer: layer})
	if err != nil {
		return err
	}
	st.history = append(st.history, h)
	return nil
}

// finish writes the stage's config and history into its image.
func (b *builder) finish(st *stage) error {
	cf, err := st.img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Config = st.cfg
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.History = st.history
	cf.Created = v1.Time{Time: time.Now().UTC()}
	st.img, err = mutate.ConfigFile(st.img, cf)
	return err
}

// copy executes COPY [--from=STAGE] [--chown=U[:G]] [--chmod=MODE] SRC... DEST.
func (b *builder) copy(st *stage, in instruction, vars map[string]string) error {
	ws := words(expand(in.args, vars))
	if strings.HasPrefix(strings.TrimSpace(in.args), "[") {
		ws = jsonOrShell(in.args)
	}
	if len(ws) < 2 {
		return fmt.Errorf("COPY needs a source and a destination")
	}
	srcs, dest := ws[:len(ws)-1], ws[len(ws)-1]
	srcRoot, fromContext := b.context, true
	if from := in.flags["from"]; from != "" {
		fromContext = false
		found := false
		for _, s := range b.stages {
			if s.name == strings.ToLower(from) {
				srcRoot, found = s.root, true
			}
		}
		if !found {
			if i, err := strconv.Atoi(from); err == nil && i < len(b.stages) {
				srcRoot, found = b.stages[i].root, true
			}
		}
		if !found {
			return fmt.Errorf("COPY --from=%s: no such stage", from)
		}
	}
	uid, gid := -1, -1
	if chown := in.flags["chown"]; chown != "" {
		var err error
		if uid, gid, _, _, err = lookupUser(st.root, expand(chown, vars)); err != nil {
			return err
		}
	}
	var chmod fs.FileMode
	if m := in.flags["chmod"]; m != "" {
		v, err := strconv.ParseUint(m, 8, 32)
		if err != nil {
			return fmt.Errorf("--chmod=%s: %w", m, err)
		}
		chmod = fs.FileMode(v)
	}
	if !path.IsAbs(dest) {
		dest = path.Join(workdir(st), dest) + map[bool]string{true: "/", false: ""}[strings.HasSuffix(dest, "/")]
	}
	var matches []string
	for _, s := range srcs {
		m, err := filepath.Glob(filepath.Join(srcRoot, s))
		if err != nil || len(m) == 0 {
			return fmt.Errorf("COPY source %s: not found", s)
		}
		matches = append(matches, m...)
	}
	c := copier{uid: uid, gid: gid, chmod: chmod, fromContext: fromContext}
	for _, src := range matches {
		info, err := os.Lstat(src)
		if err != nil {
			return err
		}
		target := filepath.Join(st.root, dest)
		if info.IsDir() {
			if err := c.mkdirs(st.root, dest); err != nil {
				return err
			}
			if err := c.tree(src, target); err != nil {
				return err
			}
			continue
		}
		if tinfo, err := os.Stat(target); strings.HasSuffix(dest, "/") || len(matches) > 1 || err == nil && tinfo.IsDir() {
			if err := c.mkdirs(st.root, dest); err != nil {
				return err
			}
			target = filepath.Join(target, filepath.Base(src))
		} else if err := c.mkdirs(st.root, path.Dir(dest)); err != nil {
			return err
		}
		if err := c.one(src, target, info); err != nil {
			return err
		}
	}
	return nil
}

type copier struct {
	uid, gid    int
	chmod       fs.FileMode
	fromContext bool
}

// mkdirs creates the missing directories of dir, root-owned 0755 as
// Docker does.
func (c copier) mkdirs(root, dir string) error {
	return os.MkdirAll(filepath.Join(root, dir), 0o755)
}

func (c copier) tree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		return c.one(p, filepath.Join(dst, rel), info)
	})
}

// one copies a file, symlink or directory with its mode and time; owner
// root (Docker's default for COPY) or --chown's.
func (c copier) one(src, dst string, info fs.FileInfo) error {
	mode := info.Mode()
	if c.fromContext && mode.Perm()&0o200 == 0 {
		// A read-only context is the Go module cache, which keeps no
		// modes (every file 0444): give files the modes git would have,
		// 0755 for scripts (a #! line) and 0644 for the rest.
		mode = mode&^fs.ModePerm | 0o644
		if info.IsDir() {
			mode = mode&^fs.ModePerm | 0o755
		} else if head, err := readHead(src); err == nil && bytes.HasPrefix(head, []byte("#!")) {
			mode = mode&^fs.ModePerm | 0o755
		}
	}
	if c.chmod != 0 {
		mode = mode&^fs.ModePerm | c.chmod
	}
	_ = os.RemoveAll(dst)
	switch {
	case info.IsDir():
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	case mode&fs.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(t, dst); err != nil {
			return err
		}
	case mode.IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			_ = in.Close()
			return err
		}
		_, err = io.Copy(out, in)
		_ = in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("COPY of %s (%s) is not supported", src, mode.Type())
	}
	uid, gid := 0, 0
	if c.uid >= 0 {
		uid, gid = c.uid, c.gid
	}
	if err := os.Lchown(dst, uid, gid); err != nil {
		return err
	}
	if mode&fs.ModeSymlink == 0 {
		if err := os.Chmod(dst, mode.Perm()|mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return err
		}
		return os.Chtimes(dst, info.ModTime(), info.ModTime())
	}
	return nil
}

func readHead(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 2)
	n, err := io.ReadFull(f, buf)
	return buf[:n], err
}
