package main

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotStartup draws, per job size, the median time until the MPIJob is
// Running and until the floor's bare Pods are, with every run as a dot, on
// log-log axes: the gap between the lines is the operator's overhead.
func plotStartup(path string, all []startupResult) error {
	p := plot.New()
	p.Title.Text = "Startup of one MPIJob against the floor"
	p.X.Label.Text = "workers (N)"
	p.Y.Label.Text = "seconds from creation"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.TickerFunc(ticks125)
	p.Legend.Top, p.Legend.Left = false, false

	series := []struct {
		name  string
		get   func(startupResult) time.Duration
		color color.Color
		shape draw.GlyphDrawer
	}{
		{"MPIJob Running", milestones[3].get, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, draw.CircleGlyph{}},
		{"all worker Pods Running", milestones[1].get, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, draw.TriangleGlyph{}},
		{"floor: N+1 bare Pods Running", milestones[4].get, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, draw.SquareGlyph{}},
		{"design floor: the job's objects from a bare client", milestones[5].get, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, draw.CrossGlyph{}},
	}
	for _, s := range series {
		var line, dots plotter.XYs
		for _, n := range sizesOf(all) {
			ds := durations(runsOf(all, n), s.get)
			line = append(line, plotter.XY{X: float64(n), Y: median(ds).Seconds()})
			for _, d := range ds {
				dots = append(dots, plotter.XY{X: float64(n), Y: d.Seconds()})
			}
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("plotting %s: %w", s.name, err)
		}
		l.Color, l.Width = s.color, vg.Points(1.5)
		sc, err := plotter.NewScatter(dots)
		if err != nil {
			return fmt.Errorf("plotting %s: %w", s.name, err)
		}
		sc.Color, sc.Shape, sc.Radius = s.color, s.shape, vg.Points(3)
		p.Add(l, sc)
		p.Legend.Add(s.name+" (median; dots: runs)", l, sc)
	}
	p.Add(plotter.NewGrid())
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// ticks125 labels 1, 2 and 5 of each decade: log axes over a small range
// would otherwise show one labelled tick.
func ticks125(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := d * m; v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
}
