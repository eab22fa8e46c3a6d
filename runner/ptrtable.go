package runner

// Corruption is one corruption setting of a table row: a corruption kind
// (see corruption.Kinds) and the fraction of training examples it hits.
// The PTR paper's table is the grid experiments/grid.PTRTable.
type Corruption struct {
	Kind  string  `json:"kind"`
	Ratio float64 `json:"ratio"`
}
