package grid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// SlurmOptions configure the scripts WriteSlurm writes.
type SlurmOptions struct {
	// Trainer is the absolute path of the trainer binary the tasks run.
	Trainer string
	// Args is the trainer command line that rebuilds the grid (e.g.
	// experiment ptr-table --epsilon 3,5 ... --out DIR), without a mode flag;
	// tasks append --cell N, the collect job --collect.
	Args []string
	// Concurrency is the %K limit: at most K tasks of an array run at once
	// (0: no limit).
	Concurrency int
	// Partition and Account are passed to sbatch when set.
	Partition, Account string
	// Extra are further sbatch options, one per #SBATCH line (e.g.
	// --qos=normal).
	Extra []string
}

// ErrUnsafeValue is wrapped by WriteSlurm's refusals of values a script
// cannot hold (control characters, sbatch separators).
var ErrUnsafeValue = errors.New("refused")

// maxArrayIndex is Slurm's default MaxArraySize − 1 (slurm.conf).
const maxArrayIndex = 1000

// WriteSlurm writes, under <out>/slurm/, one job-array script per resource
// class (array-<class>.sbatch: one task per cell, array index = cell index),
// collect.sbatch (the --collect step) and submit.sh, which submits the
// arrays and then the collect job with an afterany dependency on all of
// them, so the table is built even when some cells failed (it then lists
// them as missing). Tasks are requeue-safe: a requeued or resubmitted cell
// resumes from its checkpoint, a finished one returns at once. Logs go to
// <out>/slurm/logs/, one file per array task. It returns the files written.
func (g *Grid) WriteSlurm(out string, o SlurmOptions) ([]string, error) {
	if !filepath.IsAbs(o.Trainer) {
		return nil, fmt.Errorf("slurm: trainer path %q must be absolute", o.Trainer)
	}
	if len(g.Cells)-1 > maxArrayIndex {
		return nil, fmt.Errorf("slurm: grid %s has %d cells; array indices above %d need a larger MaxArraySize in slurm.conf", g.Name, len(g.Cells), maxArrayIndex)
	}
	if o.Concurrency < 0 {
		return nil, fmt.Errorf("slurm: concurrency must be ≥ 0, got %d", o.Concurrency)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	if err := o.check(abs); err != nil {
		return nil, err
	}
	dir := filepath.Join(abs, "slurm")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	classes := map[string][]int{}
	res := map[string]Resources{}
	for i, c := range g.Cells {
		cl := sanitize(c.Class)
		if r, ok := res[cl]; ok && r != c.Resources {
			return nil, fmt.Errorf("slurm: cells of class %q ask for different resources (%v, %v)", c.Class, r, c.Resources)
		}
		res[cl] = c.Resources
		classes[cl] = append(classes[cl], i)
	}
	var names []string
	for cl := range classes {
		names = append(names, cl)
	}
	sort.Strings(names)
	cmd := shellJoin(append([]string{o.Trainer}, o.Args...))
	header := func(b *strings.Builder, job string) {
		b.WriteString("#!/bin/bash\n")
		fmt.Fprintf(b, "# Written by `trainer %s --slurm` for grid %s (%d cells).\n", shellJoin(o.Args), g.Name, len(g.Cells))
		fmt.Fprintf(b, "#SBATCH %s\n", sbatchQuote("--job-name="+job))
		if o.Partition != "" {
			fmt.Fprintf(b, "#SBATCH %s\n", sbatchQuote("--partition="+o.Partition))
		}
		if o.Account != "" {
			fmt.Fprintf(b, "#SBATCH %s\n", sbatchQuote("--account="+o.Account))
		}
		for _, e := range o.Extra {
			fmt.Fprintf(b, "#SBATCH %s\n", sbatchQuote(e))
		}
	}
	var files []string
	var submit strings.Builder
	submit.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&submit, "# Submits grid %s: %d job array(s), then the collect step after all of them.\n", g.Name, len(names))
	submit.WriteString("# Arguments (e.g. --wait) are passed to the sbatch of the collect job.\nset -euo pipefail\n")
	fmt.Fprintf(&submit, "cd %s\ndeps=\n", shellQuote(dir))
	for _, cl := range names {
		r := res[cl]
		var b strings.Builder
		header(&b, g.Name+"-"+cl)
		arr := rangeList(classes[cl])
		if o.Concurrency > 0 {
			arr += fmt.Sprintf("%%%d", o.Concurrency)
		}
		fmt.Fprintf(&b, "#SBATCH --array=%s\n", arr)
		fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", max(r.CPUs, 1))
		if r.MemMB > 0 {
			fmt.Fprintf(&b, "#SBATCH --mem=%dM\n", r.MemMB)
		}
		if r.Time > 0 {
			fmt.Fprintf(&b, "#SBATCH --time=%s\n", slurmDuration(r.Time))
		}
		fmt.Fprintf(&b, "#SBATCH %s\n", sbatchQuote("--output="+slurmPattern(filepath.Join(dir, "logs", g.Name+"-"+cl))+"-%A_%a.log"))
		b.WriteString("#SBATCH --open-mode=append\n#SBATCH --requeue\n")
		// SIGTERM two minutes before the time limit: the trainer writes a
		// checkpoint, so a resubmitted task continues where this one stopped.
		b.WriteString("#SBATCH --signal=B:TERM@120\n")
		b.WriteString("set -euo pipefail\n")
		b.WriteString(`echo "$(date -u +%FT%TZ) cell ${SLURM_ARRAY_TASK_ID} on $(hostname), job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}, restart ${SLURM_RESTART_COUNT:-0}"` + "\n")
		fmt.Fprintf(&b, "exec %s --cell \"${SLURM_ARRAY_TASK_ID}\"\n", cmd)
		path := filepath.Join(dir, "array-"+cl+".sbatch")
		if err := writeFile(path, []byte(b.String()), 0o755); err != nil {
			return nil, err
		}
		files = append(files, path)
		fmt.Fprintf(&submit, "j=$(sbatch --parsable %s)\nj=${j%%%%;*}\necho %s\"$j\"\ndeps=\"$deps:$j\"\n",
			shellQuote(filepath.Base(path)), shellQuote(fmt.Sprintf("array %s (%d cells): job ", cl, len(classes[cl]))))
	}
	var b strings.Builder
	header(&b, g.Name+"-collect")
	b.WriteString("#SBATCH --cpus-per-task=1\n#SBATCH --mem=1024M\n#SBATCH --time=0-00:15:00\n")
	fmt.Fprintf(&b, "#SBATCH %s\n", sbatchQuote("--output="+slurmPattern(filepath.Join(dir, "logs", g.Name+"-collect"))+"-%j.log"))
	b.WriteString("set -euo pipefail\n")
	fmt.Fprintf(&b, "exec %s --collect\n", cmd)
	cpath := filepath.Join(dir, "collect.sbatch")
	if err := writeFile(cpath, []byte(b.String()), 0o755); err != nil {
		return nil, err
	}
	files = append(files, cpath)
	fmt.Fprintf(&submit, "printf 'collect: runs after%%s; table in %%s\\n' \"$(echo \"$deps\" | tr ':' ' ')\" %s\n", shellQuote(filepath.Join(abs, "table.md")))
	submit.WriteString("sbatch --dependency=\"afterany$deps\" \"$@\" collect.sbatch\n")
	spath := filepath.Join(dir, "submit.sh")
	if err := writeFile(spath, []byte(submit.String()), 0o755); err != nil {
		return nil, err
	}
	return append(files, spath), nil
}

// slurmDuration formats d as D-HH:MM:SS, rounded up to a minute.
func slurmDuration(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	return fmt.Sprintf("%d-%02d:%02d:00", m/(24*60), m/60%24, m%60)
}

// sanitize keeps a class name usable in file and job names.
func sanitize(s string) string {
	if s == "" {
		return "cells"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// shellQuote quotes s for POSIX shells.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// check refuses values the scripts cannot hold safely: a control character
// (newline, CR, NUL, any other C0 or DEL) would end a comment, an #SBATCH
// line or a shell word wherever it is written; values on #SBATCH lines must
// not contain "hetjob" or "packjob" (sbatch splits a heterogeneous job at any
// directive line containing either word, case-insensitively); a backslash in
// the log path would turn off sbatch's %A/%a/%j replacement; an extra
// option must be an option (start with '-').
func (o SlurmOptions) check(out string) error {
	type value struct{ what, v string }
	vals := []value{{"--trainer", o.Trainer}, {"--out", out}, {"--slurm-partition", o.Partition}, {"--slurm-account", o.Account}}
	for _, a := range o.Args {
		vals = append(vals, value{"argument", a})
	}
	for _, e := range o.Extra {
		vals = append(vals, value{"--slurm-option", e})
		if !strings.HasPrefix(e, "-") {
			return fmt.Errorf("slurm: --slurm-option %q is not an sbatch option (want e.g. --qos=normal): %w", e, ErrUnsafeValue)
		}
	}
	for i, v := range vals {
		if j := strings.IndexFunc(v.v, func(r rune) bool { return r < 0x20 || r == 0x7f }); j >= 0 {
			return fmt.Errorf("slurm: %s %q holds control character %U, which cannot be written into a script: %w", v.what, v.v, v.v[j], ErrUnsafeValue)
		}
		if v.what == "argument" || v.what == "--trainer" {
			continue // shell-quoted on command lines, never on #SBATCH lines
		}
		if l := strings.ToLower(v.v); strings.Contains(l, "hetjob") || strings.Contains(l, "packjob") {
			return fmt.Errorf("slurm: %s %q contains \"hetjob\" or \"packjob\", which sbatch reads as a heterogeneous-job separator: %w", v.what, v.v, ErrUnsafeValue)
		}
		if i == 1 && strings.ContainsRune(v.v, '\\') {
			return fmt.Errorf("slurm: --out %q holds a backslash, which turns off sbatch's %%A/%%a/%%j log-name replacement: %w", v.v, ErrUnsafeValue)
		}
	}
	return nil
}

// sbatchQuote writes s as one argument of an #SBATCH line. sbatch splits
// directive lines itself (src/sbatch/opt.c, get_argument): whitespace
// separates arguments, '…' or "…" group, a backslash escapes the next
// character (also inside quotes) and an unquoted # starts a comment. Plain
// values stay bare; others are double-quoted with \ and " escaped.
func sbatchQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// slurmPattern escapes a literal path for an sbatch filename pattern, in
// which % introduces a replacement (%j, %A, …) and %% is a literal %.
func slurmPattern(path string) string {
	return strings.ReplaceAll(path, "%", "%%")
}
