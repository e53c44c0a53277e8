// Command pause is the Pod sandbox's process: it holds the Pod's namespaces
// and exits on SIGTERM or SIGINT. Built static, it is the whole pause image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
