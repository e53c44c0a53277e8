// Package dockerfiles checks the Dockerfiles under build/ without Docker
// (none runs here or in CI): each produces what hack/images/build.sh
// makes without Docker — the same base suite, packages, compiler, users,
// sshd configuration, environment and command — and every file it copies
// exists. Whether the images build is left to users with Docker.
package dockerfiles
