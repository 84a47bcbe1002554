// Package ribbon is a standard Ribbon filter.
package ribbon
