module github.com/bloomery/bloomery/compat

go 1.26
