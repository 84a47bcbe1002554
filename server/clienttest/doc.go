// Package clienttest runs real Redis clients (go-redis v9) against
// bloomery serve. It is a separate module so that the client library stays
// out of the root module's go.mod.
package clienttest
