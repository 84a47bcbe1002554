// Package parquet holds interoperability tests between Bloomery's sbbf
// package and apache/arrow-go's Parquet implementation. It is a nested
// module so that arrow-go (about a hundred modules) stays out of the root
// go.mod; the package itself contains no code beyond its tests.
package parquet
