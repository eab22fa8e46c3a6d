// Package grid turns a paper's table into data: a list of cells, each a
// complete training configuration, that can be planned, run one at a time
// (idempotently, resuming an interrupted run), run in parallel on one
// machine, submitted to Slurm as a job array, and collected into a table of
// mean ± standard deviation over seeds beside the paper's number.
//
// A cell's run directory is <out>/cells/<key>, where key is a hash of every
// setting of the cell (Key), so a finished run is reused only by a cell
// whose settings are identical: changing ε from 2.27 to 2.35 — or any other
// setting — names a different directory.
package grid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/privtrain/privtrain/runner"
)

// Resources are the scheduler hints of a cell: CPUs, memory and a wall-time
// limit for one run.
type Resources struct {
	CPUs  int
	MemMB int
	Time  time.Duration
}

// Cell is one run of a grid.
type Cell struct {
	// Row holds the values of the grid's Columns that identify the cell's
	// table row (everything but the seed).
	Row []string
	// Seed is the run's seed; the cells of a row differ only in it.
	Seed uint64
	// Config holds every setting of the run; Out is set by the grid.
	Config runner.TrainConfig
	// Paper is the paper's test accuracy (in %) for the row; NaN when the
	// paper has none.
	Paper float64
	// Resources are the scheduler hints (Slurm).
	Resources Resources
	// Class names the resource class (one Slurm array per class), e.g. the
	// method.
	Class string
}

// Grid is an experiment expanded into cells.
type Grid struct {
	// Name is the experiment's name (e.g. ptr-table).
	Name string
	// Columns name the entries of every cell's Row.
	Columns []string
	Cells   []Cell
}

// Key returns the hash naming a run directory: the first 16 hex digits of
// the SHA-256 of the configuration's JSON encoding with Out and DataDir
// cleared. Those two say where files live, not what is computed (datasets
// are checksum-verified on load); every other field — method, ε, seed,
// corruption, learning rate, run length, … — is part of the key. Fields
// added to TrainConfig later with omitempty leave the keys of existing
// configurations unchanged.
//
// The noise mode enters the key as a run's checkpoint binds it
// (TrainConfig.NoiseIdentity): a secure cell (the default) has
// secure_noise true in its key, as the cells run with --secure-noise before
// secure noise became the default; a float cell (--float-noise) has no
// noise key, as every float cell had before. So a finished float cell is
// never reused as a secure one, nor the other way round, and float cells
// of earlier grids keep their directories.
func Key(cfg runner.TrainConfig) (string, error) {
	cfg = cfg.NoiseIdentity()
	cfg.Out, cfg.DataDir = "", ""
	data, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("grid: key: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

// Dir returns the run directory of cell i under out.
func (g *Grid) Dir(out string, i int) (string, error) {
	if i < 0 || i >= len(g.Cells) {
		return "", fmt.Errorf("grid %s: no cell %d (the grid has cells 0–%d)", g.Name, i, len(g.Cells)-1)
	}
	k, err := Key(g.Cells[i].Config)
	if err != nil {
		return "", err
	}
	return filepath.Join(out, "cells", k), nil
}

// Validate checks that every cell is a valid configuration, that rows have
// one value per column, and that no two cells share a key.
// MaxCells is the largest grid accepted: far above a paper's table (PTR
// Table 1 at two budgets and five seeds is 210 cells), small enough that
// building, planning and collecting a grid stays in bounded time and memory.
const MaxCells = 10000

// checkSize refuses a grid whose dimensions multiply past MaxCells, before
// any cell is built.
func checkSize(name string, dims ...int) error {
	n := 1
	for _, d := range dims {
		if d > MaxCells || n*d > MaxCells {
			return fmt.Errorf("%s: the grid would have more than %d cells (%v settings per dimension); split it", name, MaxCells, dims)
		}
		n *= d
	}
	return nil
}

func (g *Grid) Validate() error {
	if len(g.Cells) == 0 {
		return fmt.Errorf("grid %s: no cells", g.Name)
	}
	seen := map[string]int{}
	for i, c := range g.Cells {
		if len(c.Row) != len(g.Columns) {
			return fmt.Errorf("grid %s: cell %d has %d row values for %d columns", g.Name, i, len(c.Row), len(g.Columns))
		}
		cfg := c.Config
		cfg.Out = "validate"
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("grid %s: cell %d (%s, seed %d): %w", g.Name, i, strings.Join(c.Row, " "), c.Seed, err)
		}
		k, err := Key(c.Config)
		if err != nil {
			return err
		}
		if j, ok := seen[k]; ok {
			return fmt.Errorf("grid %s: cells %d and %d have identical settings", g.Name, j, i)
		}
		seen[k] = i
	}
	return nil
}

// cellRecord is cell.json in a run directory: which grid row the run
// belongs to, for people browsing the directories.
type cellRecord struct {
	Grid    string            `json:"grid"`
	Index   int               `json:"index"`
	Key     string            `json:"key"`
	Row     map[string]string `json:"row"`
	Seed    uint64            `json:"seed"`
	Created time.Time         `json:"created"`
}

// ErrBusy is returned by RunCell when another process holds the cell's lock.
var ErrBusy = errors.New("cell is being run by another process")

// RunCell runs cell i with its run directory under out and returns its
// summary. It is idempotent: a finished cell (summary.json present) is read
// back without training; an interrupted one (checkpoint present) resumes.
// A lock file keeps two processes from running the same cell at once
// (ErrBusy). progress receives the progress log (nil: none).
func (g *Grid) RunCell(ctx context.Context, out string, i int, progress io.Writer) (*runner.Summary, error) {
	dir, err := g.Dir(out, i)
	if err != nil {
		return nil, err
	}
	if s, err := readSummary(dir); err == nil {
		return s, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("grid %s: cell %d: %w", g.Name, i, err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("grid %s: cell %d (%s): %w", g.Name, i, dir, err)
	}
	defer unlock()
	// Another process may have finished the cell while we waited for the
	// directory.
	if s, err := readSummary(dir); err == nil {
		return s, nil
	}
	c := g.Cells[i]
	key := filepath.Base(dir)
	row := map[string]string{}
	for j, col := range g.Columns {
		row[col] = c.Row[j]
	}
	if _, err := os.Stat(filepath.Join(dir, "cell.json")); errors.Is(err, os.ErrNotExist) {
		rec := cellRecord{Grid: g.Name, Index: i, Key: key, Row: row, Seed: c.Seed, Created: time.Now().UTC()}
		if err := writeJSON(filepath.Join(dir, "cell.json"), rec); err != nil {
			return nil, err
		}
	}
	cfg := c.Config
	cfg.Out = dir
	_, statErr := os.Stat(filepath.Join(dir, "state.json"))
	resume := statErr == nil
	s, err := runner.Train(ctx, cfg, runner.Options{Progress: progress, Resume: resume, Foreign: []string{"cell.json", ".cell.lock"}})
	if err != nil {
		return nil, fmt.Errorf("grid %s: cell %d (%s, seed %d): %w", g.Name, i, strings.Join(c.Row, " "), c.Seed, err)
	}
	return s, nil
}

// RunAll runs the given cells (all when nil) with up to jobs cells at a
// time in this process, after CheckData has verified all their data. Progress lines of each cell are prefixed with its
// index. Finished cells are skipped; a failing cell does not stop the
// others; the errors are joined.
func (g *Grid) RunAll(ctx context.Context, out string, cells []int, jobs int, progress io.Writer) error {
	if jobs < 1 {
		return fmt.Errorf("grid %s: jobs must be ≥ 1, got %d", g.Name, jobs)
	}
	if cells == nil {
		for i := range g.Cells {
			cells = append(cells, i)
		}
	}
	if err := g.CheckData(out, cells); err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	lw := &lockedWriter{w: progress}
	next := make(chan int)
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var pw io.Writer
				if progress != nil {
					pw = &prefixWriter{w: lw, prefix: fmt.Sprintf("[cell %d] ", i)}
				}
				if pw != nil {
					fmt.Fprintf(pw, "%s seed %d\n", strings.Join(g.Cells[i].Row, " "), g.Cells[i].Seed)
				}
				s, err := g.RunCell(ctx, out, i, pw)
				if pw != nil {
					if err == nil {
						fmt.Fprintf(pw, "done: test accuracy %.2f%%, %d steps\n", 100*s.TestAccuracy, s.Steps)
					}
					pw.(*prefixWriter).Flush()
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, i := range cells {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Plan writes one line per cell — index, key, state (done, partial or
// todo), row values, seed, estimated steps and wall time (Estimate) — then
// the number of cells, the estimated wall time of the unfinished ones
// (in total and at jobs cells at a time) with the source of the numbers,
// and the result of CheckData.
func (g *Grid) Plan(w io.Writer, out string, jobs int) error {
	fmt.Fprintf(w, "# grid %s: %d cells, run directories %s/cells/<key>\n", g.Name, len(g.Cells), out)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cell\tkey\tstate\t%s\tseed\tsteps\test. wall\tfrom\n", strings.Join(g.Columns, "\t"))
	var total float64
	todo, unknown := 0, 0
	sources := map[string]bool{}
	for i, c := range g.Cells {
		dir, err := g.Dir(out, i)
		if err != nil {
			return err
		}
		e, err := g.Estimate(out, i)
		if err != nil {
			return err
		}
		wall, steps := "?", "?"
		if e.Steps > 0 {
			steps = fmt.Sprint(e.Steps)
		}
		switch {
		case e.Source == "finished":
			wall = "–"
		case math.IsNaN(e.Seconds):
			todo++
			unknown++
		default:
			todo++
			total += e.Seconds
			wall = formatDuration(e.Seconds)
			sources[e.Source] = true
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", i, filepath.Base(dir), cellState(dir), strings.Join(c.Row, "\t"), c.Seed, steps, wall, e.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if jobs < 1 {
		jobs = 1
	}
	fmt.Fprintf(w, "# %d cells, %d to run: estimated wall time %s one cell at a time", len(g.Cells), todo, formatDuration(total))
	if jobs > 1 {
		// The per-step rates were measured with two cells sharing two
		// cores, so parallel cells scale with the cores there are.
		par := min(jobs, runtime.NumCPU())
		fmt.Fprintf(w, ", about %s at --jobs %d with a core per cell (this machine has %d)", formatDuration(total/float64(par)), jobs, runtime.NumCPU())
	}
	if unknown > 0 {
		fmt.Fprintf(w, ", plus %d cells with no measurement (not counted)", unknown)
	}
	fmt.Fprintln(w)
	if len(sources) > 0 {
		fmt.Fprintf(w, "# estimates: steps × seconds per step, from %s; a measured cell's own time where one matches; finished cells here override them. Data loading and accountant set-up not counted.\n", costSource)
	}
	if err := g.CheckData(out, nil); err != nil {
		fmt.Fprintf(w, "# data: MISSING OR INVALID: %v\n", err)
	} else {
		fmt.Fprintln(w, "# data: every unfinished cell's dataset is present and matches its checksums")
	}
	return nil
}

// cellState is "done", "partial" (checkpoint) or "todo".
func cellState(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		return "done"
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err == nil {
		return "partial"
	}
	return "todo"
}

// readSummary reads a finished cell's summary: the operator-only full one
// (private/summary.json, with the wall time and throughput the table
// reports) when present, else the public summary.json. A cell is finished
// when its public summary.json exists.
func readSummary(dir string) (*runner.Summary, error) {
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "private", "summary.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(dir, "summary.json")
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var s runner.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("grid: %s: %w", path, err)
	}
	if math.IsNaN(s.TestAccuracy) {
		return nil, fmt.Errorf("grid: %s: test accuracy is NaN", dir)
	}
	return &s, nil
}

// writeJSON writes v to path through a temporary file and a rename.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("grid: encode %s: %w", path, err)
	}
	return writeFile(path, append(data, '\n'), 0o644)
}

// writeFile writes data to path through a temporary file and a rename, so
// readers never see a torn file.
func writeFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("grid: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("grid: write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("grid: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("grid: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("grid: write %s: %w", path, err)
	}
	return nil
}

// lockedWriter serialises writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes complete lines, each prefixed; a carriage return
// ends a line too (a redrawn progress bar becomes separate lines).
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	for _, c := range b {
		if c == '\n' || c == '\r' {
			if len(p.buf) > 0 {
				if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf); err != nil {
					return 0, err
				}
				p.buf = p.buf[:0]
			}
			continue
		}
		p.buf = append(p.buf, c)
	}
	return len(b), nil
}

// Flush writes a pending partial line.
func (p *prefixWriter) Flush() {
	if len(p.buf) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf)
		p.buf = p.buf[:0]
	}
}
