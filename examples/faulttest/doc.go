// Package faulttest is the runnable example of docs/testing-your-application.md:
// how an application tests itself under failures. Its tests count words
// through a filter that fails retryably once per record, into state whose
// backing map fails a chosen call (statetest.FaultMap), and across a
// killed process, and check the counts are exact every time.
package faulttest
