package kubectlmpi

import (
	"fmt"
	"io"
)

// printer writes formatted text and keeps the first error, so that a
// renderer reads as the lines it prints and checks once, at the end.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *printer) println(a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, a...)
	}
}
