package figstyle

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// firstInkRow returns the first pixel row of the PNG that is not all
// background (white), or -1.
func firstInkRow(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				return y - b.Min.Y
			}
		}
	}
	return -1
}

// TestTitleClearOfTopEdge: a title (with tall glyphs and a subscript) is
// drawn at least 2 mm below the top edge, for one plot and for panels.
func TestTitleClearOfTopEdge(t *testing.T) {
	mk := func() *plot.Plot {
		p := plot.New()
		p.Title.Text = "Ê against σ₁ (δ₀ = 1e-8)"
		l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 2}, {X: 2, Y: 3}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(l)
		return p
	}
	const dpi = 96 // vgimg's default for PNG
	minRows := int(math.Floor(2 * float64(vg.Millimeter) / float64(vg.Inch) * dpi))
	for _, n := range []int{1, 2} {
		var plots []*plot.Plot
		for i := 0; i < n; i++ {
			plots = append(plots, mk())
		}
		stem := filepath.Join(t.TempDir(), "fig")
		if _, err := SavePanels(plots, 6*vg.Inch, 3*vg.Inch, stem, "png"); err != nil {
			t.Fatal(err)
		}
		if y := firstInkRow(t, stem+".png"); y < minRows {
			t.Errorf("%d panel(s): first ink at pixel row %d, want ≥ %d (2 mm)", n, y, minRows)
		}
	}
}
