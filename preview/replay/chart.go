package replay

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	recordedColor = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	replayedColor = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
)

// WriteChart draws USD/hour and nodes over recorded time, recorded
// against replayed, into path (.svg, else PNG).
func WriteChart(path string, samples []Sample) error {
	cost := linePlot("USD/hour", samples, func(c Capacity) float64 { return c.USDPerHour })
	nodes := linePlot("nodes", samples, func(c Capacity) float64 { return float64(c.Nodes) })
	w, h := 8*vg.Inch, 6*vg.Inch
	var c vg.CanvasWriterTo
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		c = vgsvg.New(w, h)
	} else {
		c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadX: vg.Points(6), PadY: vg.Points(12)}
	plots := [][]*plot.Plot{{cost}, {nodes}}
	canvases := plot.Align(plots, tiles, dc)
	cost.Draw(canvases[0][0])
	nodes.Draw(canvases[1][0])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// linePlot is one measure over time (minutes of recorded time), one line
// per side.
func linePlot(measure string, samples []Sample, v func(Capacity) float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = measure + ", recorded and replayed"
	p.X.Label.Text = "recorded minutes"
	p.Y.Label.Text = measure
	p.Y.Min = 0
	rec, rep := make(plotter.XYs, len(samples)), make(plotter.XYs, len(samples))
	for i, s := range samples {
		x := s.At.Minutes()
		rec[i] = plotter.XY{X: x, Y: v(s.Recorded)}
		rep[i] = plotter.XY{X: x, Y: v(s.Replayed)}
	}
	for _, l := range []struct {
		name string
		xys  plotter.XYs
		c    color.Color
	}{{"recorded", rec, recordedColor}, {"replayed", rep, replayedColor}} {
		line, err := plotter.NewLine(l.xys)
		if err != nil {
			continue // no samples
		}
		line.Color = l.c
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	p.Legend.Top = true
	return p
}
