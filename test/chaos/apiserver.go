package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// outage is when the API server was down: from the stop until /readyz
// answered again.
type outage struct {
	from, to time.Time
}

// restartAPIServer stops the benchmark cluster's kube-apiserver and starts
// it again with the same command line, as hack/bench/up.sh started it
// (its pid file and log under the cluster's directory, so down.sh stops
// the new process), then waits for /readyz. The audit log is appended to,
// so offsets into it stay valid.
func restartAPIServer(ctx context.Context, e *env) (outage, error) {
	pidFile := filepath.Join(e.o.benchDir, "pids", "kube-apiserver")
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return outage{}, fmt.Errorf("kube-apiserver's pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return outage{}, fmt.Errorf("kube-apiserver's pid file: %w", err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return outage{}, fmt.Errorf("kube-apiserver's command line: %w", err)
	}
	argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if !strings.HasSuffix(argv[0], "kube-apiserver") {
		return outage{}, fmt.Errorf("pid %d is %s, not kube-apiserver", pid, argv[0])
	}
	out := outage{from: time.Now()}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return out, fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	// A graceful stop that takes longer (it drains long watches) ends
	// as a crash would.
	if !gone(pid, 10*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if !gone(pid, 10*time.Second) {
			return out, fmt.Errorf("kube-apiserver (pid %d) does not stop", pid)
		}
	}
	logFile, err := os.OpenFile(filepath.Join(e.o.benchDir, "logs", "kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return out, err
	}
	defer func() { _ = logFile.Close() }()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own session: it outlives this program, as up.sh's processes do,
	// until down.sh stops it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return out, fmt.Errorf("starting kube-apiserver: %w", err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return out, err
	}
	go func() { _ = cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		body, err := e.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && bytes.Equal(bytes.TrimSpace(body), []byte("ok")) {
			out.to = time.Now()
			return out, nil
		}
		if time.Now().After(deadline) {
			return out, fmt.Errorf("kube-apiserver not ready 2 min after its restart: %w", err)
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-tick.C:
		}
	}
}

// gone waits, bounded, until process pid has exited.
func gone(pid int, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); err != nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
