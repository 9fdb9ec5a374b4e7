package ciformat

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// The JUnit XML as Jenkins (its junit-10.xsd) and GitLab read it: <testsuites> of <testsuite
// name tests failures errors skipped time> of <testcase classname name time>, each with its
// <failure message type> elements. Written from these types rather than with
// github.com/jstemmer/go-junit-report/v2/junit, whose test case holds one failure: a linted file
// has one failure per error. A test case counts once in failures however many it holds.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string           `xml:"name,attr"`
		Tests      int              `xml:"tests,attr"`
		Failures   int              `xml:"failures,attr"`
		Errors     int              `xml:"errors,attr"`
		Skipped    int              `xml:"skipped,attr"`
		Time       string           `xml:"time,attr"`
		Timestamp  string           `xml:"timestamp,attr,omitempty"`
		Properties *junitProperties `xml:"properties"`
		Cases      []junitCase      `xml:"testcase"`
	}
	junitProperties struct {
		Property []junitProperty `xml:"property"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Classname string `xml:"classname,attr"`
		Name      string `xml:"name,attr"`
		Time      string `xml:"time,attr"`
		// File is the test's source, relative to the checkout: GitLab links it.
		File      string        `xml:"file,attr,omitempty"`
		Failures  []junitResult `xml:"failure"`
		Errors    []junitResult `xml:"error"`
		Skipped   *junitResult  `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	// junitResult is a failure, error or skip: the reason in message (Jenkins shows it) and in
	// the text (GitLab shows that).
	junitResult struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// junitSuiteOf counts a suite's cases: each is exactly one of passed, failed, errored, skipped.
func junitSuiteOf(name string, started time.Time, elapsed time.Duration, props []junitProperty, cases []junitCase) junitSuite {
	s := junitSuite{Name: name, Tests: len(cases), Time: seconds(elapsed), Cases: cases}
	if len(props) > 0 {
		s.Properties = &junitProperties{props}
	}
	if !started.IsZero() {
		s.Timestamp = started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, c := range cases {
		switch {
		case len(c.Errors) > 0:
			s.Errors++
		case len(c.Failures) > 0:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	return s
}

// junitDocument wraps one suite (a command's) in <testsuites> with the same counts.
func junitDocument(s junitSuite) ([]byte, error) {
	doc := junitSuites{Name: "limitctl", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped,
		Time: s.Time, Suites: []junitSuite{s}}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}

// seconds is a JUnit time: seconds with millisecond precision.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// ErrorJUnit is the report of a command that ended without a result: one test case holding the
// message, so the failure shows in the CI's test report and not only in its log. checkFailed
// (exit 3: hammer's script failed lint before any load) makes it a failure, like every check
// that fails; otherwise (exit 1: the server unreachable) it is an error.
func ErrorJUnit(command string, started time.Time, elapsed time.Duration, err error, checkFailed bool) ([]byte, error) {
	c := junitCase{Classname: "limitctl." + strings.ReplaceAll(command, " ", "."), Name: command, Time: seconds(elapsed)}
	if checkFailed {
		c.Failures = []junitResult{{Message: err.Error(), Type: "check", Text: err.Error()}}
	} else {
		c.Errors = []junitResult{{Message: err.Error(), Type: "error", Text: err.Error()}}
	}
	return junitDocument(junitSuiteOf("limitctl "+command, started, elapsed, nil, []junitCase{c}))
}
