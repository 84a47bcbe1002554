// Package metrics writes the Prometheus text exposition format (version
// 0.0.4) without a client library: families with HELP and TYPE lines,
// escaped label values, and histograms as cumulative _bucket series with
// _sum and _count. Values are computed at scrape time by the caller.
package metrics

import (
	"math"
	"strconv"
	"strings"
)

// ContentType is the exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Writer accumulates one scrape. Not safe for concurrent use.
type Writer struct {
	b strings.Builder
}

// Label is one name="value" pair.
type Label struct{ Name, Value string }

// Family starts a metric family: typ is counter, gauge or histogram.
func (w *Writer) Family(name, typ, help string) {
	w.b.WriteString("# HELP ")
	w.b.WriteString(name)
	w.b.WriteByte(' ')
	w.b.WriteString(escapeHelp(help))
	w.b.WriteString("\n# TYPE ")
	w.b.WriteString(name)
	w.b.WriteByte(' ')
	w.b.WriteString(typ)
	w.b.WriteByte('\n')
}

// Sample writes one series value.
func (w *Writer) Sample(name string, v float64, labels ...Label) {
	w.b.WriteString(name)
	if len(labels) > 0 {
		w.b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.b.WriteString(l.Name)
			w.b.WriteString(`="`)
			w.b.WriteString(escapeLabel(l.Value))
			w.b.WriteByte('"')
		}
		w.b.WriteByte('}')
	}
	w.b.WriteByte(' ')
	w.b.WriteString(formatFloat(v))
	w.b.WriteByte('\n')
}

// Histogram writes one histogram series: counts are per bucket (not
// cumulative), with len(counts) == len(bounds)+1, the last being +Inf.
func (w *Writer) Histogram(name string, bounds []float64, counts []uint64, sum float64, labels ...Label) {
	var cum uint64
	ls := append(append([]Label(nil), labels...), Label{Name: "le"})
	for i, c := range counts {
		cum += c
		le := "+Inf"
		if i < len(bounds) {
			le = formatFloat(bounds[i])
		}
		ls[len(ls)-1].Value = le
		w.Sample(name+"_bucket", float64(cum), ls...)
	}
	w.Sample(name+"_sum", sum, labels...)
	w.Sample(name+"_count", float64(cum), labels...)
}

// String returns the scrape body.
func (w *Writer) String() string { return w.b.String() }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") && validUTF8(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return r.Replace(s)
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "") == s }
