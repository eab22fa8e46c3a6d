// Package fileutil holds the file operations run directories and data
// loading share: the one crash-safe write (temporary file, fsync, rename,
// fsync of the directory), removal of the temporary files an interrupted
// write leaves behind, and the check that a path is a regular file before it
// is opened (a FIFO or device would block or never end).
package fileutil
