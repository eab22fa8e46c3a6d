package figstyle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func labels(ts []plot.Tick) (lab []string, minor int) {
	for _, t := range ts {
		if t.Label != "" {
			lab = append(lab, t.Label)
		} else {
			minor++
		}
	}
	return
}

func TestLinearTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     string
		minor    int
	}{
		// σ₁ from 6 to 20: step 2 (raw 1.75), minor every 0.5
		{6, 20, "6 8 10 12 14 16 18 20", 21},
		{0, 1, "0 0.2 0.4 0.6 0.8 1.0", 15},
		{0, 10000, "0 2000 4000 6000 8000 10000", 15},
		{-0.3, 0.3, "-0.3 -0.2 -0.1 0 0.1 0.2 0.3", 24},
	} {
		lab, minor := labels(LinearTicks{}.Ticks(c.min, c.max))
		if got := strings.Join(lab, " "); got != c.want || minor != c.minor {
			t.Errorf("[%v, %v]: labels %q (%d minor), want %q (%d)", c.min, c.max, got, minor, c.want, c.minor)
		}
	}
}

func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		{1e-5, 10, "1e-5 1e-4 0.001 0.01 0.1 1 10"},
		{2, 40, "2 5 10 20"},
		{0.03, 0.5, "0.05 0.1 0.2 0.5"},
	} {
		lab, _ := labels(LogTicks{}.Ticks(c.min, c.max))
		if got := strings.Join(lab, " "); got != c.want {
			t.Errorf("[%v, %v]: %q, want %q", c.min, c.max, got, c.want)
		}
	}
}

func TestSavePanels(t *testing.T) {
	var plots []*plot.Plot
	for i := 0; i < 2; i++ {
		p := plot.New()
		p.Title.Text = "ε against σ₁ (δ₀ = 1e-8)"
		l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 2}, {X: 2, Y: 3}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(l)
		plots = append(plots, p)
	}
	stem := filepath.Join(t.TempDir(), "fig")
	paths, err := SavePanels(plots, 8*vg.Inch, 3*vg.Inch, stem)
	if err != nil {
		t.Fatal(err)
	}
	magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}
	if len(paths) != 3 {
		t.Fatalf("paths %v", paths)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := magic[strings.TrimPrefix(filepath.Ext(p), ".")]; !strings.HasPrefix(string(b), m) {
			t.Errorf("%s does not start with %q", p, m)
		}
	}
	if b, _ := os.ReadFile(stem + ".svg"); !strings.Contains(string(b), "σ₁") {
		t.Error("SVG lacks the σ₁ title text")
	}
}
