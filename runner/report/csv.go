package report

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// table is one CSV file: a header and rows of numbers.
type table struct {
	name   string // file name without .csv
	header []string
	rows   [][]float64
}

// tables are run r's curves (and, for a personalized run, its budget
// groups) as CSV tables; the operator-only ones only with operator.
func (r *Run) tables(operator bool) []table {
	var out []table
	curve := func(c Curve) {
		if c.Len() == 0 {
			return
		}
		t := table{name: c.YName, header: []string{c.XName, c.YName}}
		for i := range c.X {
			t.rows = append(t.rows, []float64{c.X[i], c.Y[i]})
		}
		out = append(out, t)
	}
	curve(r.Accuracy)
	curve(r.Epsilon)
	curve(r.PassRate)
	curve(r.PassWindow)
	curve(r.F)
	if len(r.Groups) > 0 {
		t := table{name: "pdp_group_spend", header: []string{"epsilon", "delta", "examples"}}
		for k := range r.Groups[0].Rounds {
			t.header = append(t.header, fmt.Sprintf("round_%d", k+1))
		}
		t.header = append(t.header, "spent")
		for _, g := range r.Groups {
			row := append([]float64{g.Epsilon, g.Delta, float64(g.Examples)}, g.Rounds...)
			t.rows = append(t.rows, append(row, g.Spent))
		}
		out = append(out, t)
	}
	if operator {
		for _, c := range []Curve{r.Loss, r.Batch, r.Margin, r.Noisy} {
			c.YName = "operator_" + c.YName
			curve(c)
		}
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WriteCSV writes every curve of every run to dir/<run label>/<curve>.csv
// (operator-only curves, with Options.Operator, named operator_*.csv) and
// returns the files written.
func (rep *Report) WriteCSV(dir string) ([]string, error) {
	var files []string
	for _, r := range rep.Runs {
		sub := filepath.Join(dir, unsafeName.ReplaceAllString(r.Label, "_"))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return files, fmt.Errorf("csv: %w", err)
		}
		for _, t := range r.tables(rep.Opt.Operator) {
			path := filepath.Join(sub, t.name+".csv")
			if err := writeTable(path, t); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

func writeTable(path string, t table) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write(t.header)
	rec := make([]string, len(t.header))
	for _, row := range t.rows {
		for i, v := range row {
			rec[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("csv %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("csv %s: %w", path, err)
	}
	return nil
}
