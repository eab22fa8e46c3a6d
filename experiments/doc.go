// Package experiments turns named configuration grids into runs, tables and
// figures that reproduce the papers privtrain implements.
package experiments
