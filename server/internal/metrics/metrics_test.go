package metrics

import "testing"

func TestExposition(t *testing.T) {
	var w Writer
	w.Family("x_total", "counter", "Help with \\ and\nnewline.")
	w.Sample("x_total", 3, Label{"k", "a\"b\\c\nd"})
	w.Family("h_seconds", "histogram", "H.")
	w.Histogram("h_seconds", []float64{0.5, 1}, []uint64{1, 2, 3}, 4.25, Label{"c", "z"})
	want := "# HELP x_total Help with \\\\ and\\nnewline.\n# TYPE x_total counter\n" +
		"x_total{k=\"a\\\"b\\\\c\\nd\"} 3\n" +
		"# HELP h_seconds H.\n# TYPE h_seconds histogram\n" +
		"h_seconds_bucket{c=\"z\",le=\"0.5\"} 1\nh_seconds_bucket{c=\"z\",le=\"1\"} 3\nh_seconds_bucket{c=\"z\",le=\"+Inf\"} 6\n" +
		"h_seconds_sum{c=\"z\"} 4.25\nh_seconds_count{c=\"z\"} 6\n"
	if got := w.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
