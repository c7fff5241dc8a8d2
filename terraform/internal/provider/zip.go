package provider

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// zipEpoch is the modification time of every entry: the earliest a zip can express, so
// the archive does not depend on when the files were written.
var zipEpoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// dosEpochDate is zipEpoch as an MS-DOS date: (year-1980)<<9 | month<<5 | day.
const dosEpochDate = 0<<9 | 1<<5 | 1

// excludedNames are never packed from a source_dir: tool and cache directories that are
// no part of a function's code.
var excludedNames = map[string]bool{
	".git":                true,
	".hg":                 true,
	".svn":                true,
	"__pycache__":         true,
	".terraform":          true,
	".DS_Store":           true,
	".pytest_cache":       true,
	".mypy_cache":         true,
	".terraform.lock.hcl": true,
}

func excluded(name string) bool {
	if excludedNames[name] {
		return true
	}
	return strings.HasSuffix(name, ".pyc") || strings.HasPrefix(name, "terraform.tfstate")
}

// ZipDir packs a directory deterministically: entries sorted by their slash-separated
// path, no directory entries, every entry with the same modification time (1980-01-01)
// and mode 0644, deflate at a fixed level, no extra fields or comments. The same tree
// gives the same bytes, whatever the files' timestamps, owners or permissions.
// Symbolic links and other non-regular files are refused (the gateway refuses them too).
func ZipDir(dir string) ([]byte, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("source_dir: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("source_dir %q is not a directory", dir)
	}
	type entry struct{ rel, abs string }
	var entries []entry
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		if excluded(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("source_dir: %s is not a regular file (symbolic links and special files cannot be packed)", filepath.ToSlash(rel))
		}
		entries = append(entries, entry{rel: filepath.ToSlash(rel), abs: path})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("source_dir %q has no files", dir)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })

	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for _, e := range entries {
		// the MS-DOS date and time fields only (1980-01-01 00:00): setting Modified would
		// add an extended-timestamp extra field as well
		header := &zip.FileHeader{Name: e.rel, Method: zip.Deflate, ModifiedDate: dosEpochDate, ModifiedTime: 0}
		header.SetMode(0o644)
		fw, err := w.CreateHeader(header)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(e.abs)
		if err != nil {
			return nil, fmt.Errorf("source_dir: %w", err)
		}
		_, err = io.Copy(fw, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("source_dir: reading %s: %w", e.rel, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SHA256Hex is the hex sha256 of data, as the gateway reports it.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// LoadCode returns the archive to upload: source_dir packed by ZipDir, or zip_file as is.
func LoadCode(sourceDir, zipFile string) ([]byte, error) {
	switch {
	case sourceDir != "" && zipFile != "":
		return nil, fmt.Errorf("set only one of source_dir and zip_file")
	case sourceDir != "":
		return ZipDir(sourceDir)
	case zipFile != "":
		data, err := os.ReadFile(zipFile)
		if err != nil {
			return nil, fmt.Errorf("zip_file: %w", err)
		}
		return data, nil
	default:
		return nil, fmt.Errorf("one of source_dir and zip_file is required")
	}
}
