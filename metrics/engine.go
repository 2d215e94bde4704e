package metrics

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Label-value indices. The last index of each dimension is "unknown", for
// values outside the spec's closed sets (the engine never produces them;
// the index keeps a bug from minting unbounded series).
const (
	numPoints    = 9
	numDecisions = 4
	numModes     = 3
)

// labelSet holds the bounded label values and their lookup tables.
type labelSet struct {
	points    [numPoints]string
	decisions [numDecisions]string
	modes     [numModes]string
	// reasons: none, policy, the reserved host_error:* reasons,
	// host_error:other, then the configured policy reasons.
	reasons   []string
	hostIdx   map[string]int
	policyIdx map[string]int
}

const (
	reasonNoneIdx      = 0
	reasonPolicyIdx    = 1
	reasonHostOtherIdx = 2
)

func newLabelSet(policyReasons []string) labelSet {
	ls := labelSet{
		decisions: [numDecisions]string{string(enforcement.DecisionAllow), string(enforcement.DecisionDeny), string(enforcement.DecisionTransform), unknownLabel},
		modes:     [numModes]string{string(enforcement.Enforce), string(enforcement.EvaluateOnly), unknownLabel},
		reasons:   []string{ReasonNone, ReasonPolicy, ReasonHostOther},
		hostIdx:   map[string]int{},
		policyIdx: map[string]int{},
	}
	for i, p := range enforcement.Points() {
		ls.points[i] = string(p)
	}
	ls.points[numPoints-1] = unknownLabel
	for _, r := range enforcement.ReservedReasons() {
		ls.hostIdx[r] = len(ls.reasons)
		ls.reasons = append(ls.reasons, r)
	}
	for _, r := range policyReasons {
		if r == "" || enforcement.IsHostError(r) || r == ReasonNone || r == ReasonPolicy {
			continue
		}
		if _, dup := ls.policyIdx[r]; dup {
			continue
		}
		ls.policyIdx[r] = len(ls.reasons)
		ls.reasons = append(ls.reasons, r)
	}
	return ls
}

func pointIndex(p enforcement.Point) int {
	switch p {
	case enforcement.AgentStartup:
		return 0
	case enforcement.Input:
		return 1
	case enforcement.PreModelCall:
		return 2
	case enforcement.PostModelCall:
		return 3
	case enforcement.PreToolCall:
		return 4
	case enforcement.PostToolCall:
		return 5
	case enforcement.Output:
		return 6
	case enforcement.AgentShutdown:
		return 7
	}
	return numPoints - 1
}

func decisionIndex(d enforcement.Decision) int {
	switch d {
	case enforcement.DecisionAllow:
		return 0
	case enforcement.DecisionDeny:
		return 1
	case enforcement.DecisionTransform:
		return 2
	}
	return numDecisions - 1
}

func modeIndex(m enforcement.Mode) int {
	switch m {
	case enforcement.Enforce:
		return 0
	case enforcement.EvaluateOnly:
		return 1
	}
	return numModes - 1
}

// reasonIndex classifies a verdict reason (see the package doc).
func (ls *labelSet) reasonIndex(reason string) int {
	switch {
	case reason == "":
		return reasonNoneIdx
	case enforcement.IsHostError(reason):
		if i, ok := ls.hostIdx[reason]; ok {
			return i
		}
		return reasonHostOtherIdx
	case len(ls.policyIdx) > 0:
		if i, ok := ls.policyIdx[reason]; ok {
			return i
		}
	}
	return reasonPolicyIdx
}

// ObserveEmission implements [enforcement.Observer]: one call per record.
func (m *Metrics) ObserveEmission(r *enforcement.Record, d time.Duration) {
	p := pointIndex(r.InterceptionPoint)
	dec := decisionIndex(r.Verdict.Decision)
	mode := modeIndex(r.Mode)
	reason := m.labels.reasonIndex(r.Verdict.Reason)
	i := ((p*numDecisions+dec)*numModes+mode)*len(m.labels.reasons) + reason
	if c := m.emissionCache[i].Load(); c != nil {
		(*c).Inc()
	} else {
		m.resolveEmission(i, p, dec, mode, reason).Inc()
	}
	if d > 0 {
		if o := m.emissionDurs[p].Load(); o != nil {
			(*o).Observe(d.Seconds())
		} else {
			m.resolveEmissionDuration(p).Observe(d.Seconds())
		}
	}
	if mode == 0 && dec == 2 { // enforce, transform
		if c := m.transformCache[p].Load(); c != nil {
			(*c).Inc()
		} else {
			m.resolveTransform(p).Inc()
		}
	}
	if r.FoldTruncated != nil && *r.FoldTruncated {
		m.foldTruncated.Inc()
	}
	switch r.ResolvedBy {
	case enforcement.ResolvedByApproval:
		m.approval(0).Inc()
	case enforcement.ResolvedByRejection:
		m.approval(1).Inc()
	}
}

func (m *Metrics) resolveEmission(i, p, dec, mode, reason int) prometheus.Counter {
	c := m.emissions.WithLabelValues(m.labels.points[p], m.labels.decisions[dec], m.labels.reasons[reason], m.labels.modes[mode])
	m.emissionCache[i].Store(&c)
	return c
}

func (m *Metrics) resolveEmissionDuration(p int) prometheus.Observer {
	o := m.emissionDuration.WithLabelValues(m.labels.points[p])
	m.emissionDurs[p].Store(&o)
	return o
}

func (m *Metrics) resolveTransform(p int) prometheus.Counter {
	c := m.transforms.WithLabelValues(m.labels.points[p])
	m.transformCache[p].Store(&c)
	return c
}

func (m *Metrics) approval(i int) prometheus.Counter {
	if c := m.approvalCache[i].Load(); c != nil {
		return *c
	}
	c := m.approvals.WithLabelValues([...]string{enforcement.ResolvedByApproval, enforcement.ResolvedByRejection}[i])
	m.approvalCache[i].Store(&c)
	return c
}

// interceptorKey identifies a registration: its index and name.
type interceptorKey struct {
	index int
	name  string
}

// interceptorSeries caches one registration's children.
type interceptorSeries struct {
	name     string
	label    string
	verdicts [numPoints][numDecisions]*lazyCounter
	duration [numPoints]*lazyObserver
	failures []*lazyCounter // by reason index; nil for non-host_error reasons
}

// maxCachedIndex bounds the copy-on-write index table; registrations past it
// still count, through the keyed map.
const maxCachedIndex = 256

// ObserveInterceptor implements [enforcement.Observer]: one call per
// interceptor invocation, with its post-gate verdict.
func (m *Metrics) ObserveInterceptor(o enforcement.InterceptorObservation) {
	s := m.interceptor(o.Index, o.Name)
	p := pointIndex(o.Point)
	s.verdicts[p][decisionIndex(o.Decision)].Inc()
	s.duration[p].Observe(o.Duration.Seconds())
	if o.Decision == enforcement.DecisionDeny && enforcement.IsHostError(o.Reason) {
		s.failures[m.labels.reasonIndex(o.Reason)].Inc()
	}
}

// interceptor returns the series of registration (index, name): an atomic
// load and a string comparison once seen.
func (m *Metrics) interceptor(index int, name string) *interceptorSeries {
	if tbl := m.interceptors.Load(); tbl != nil && index >= 0 && index < len(*tbl) {
		if s := (*tbl)[index]; s != nil && s.name == name {
			return s
		}
	}
	m.imu.Lock()
	defer m.imu.Unlock()
	key := interceptorKey{index, name}
	s := m.ibyKey[key]
	if s == nil {
		s = m.newInterceptorSeries(index, name)
		m.ibyKey[key] = s
	}
	if index >= 0 && index < maxCachedIndex {
		var tbl []*interceptorSeries
		if old := m.interceptors.Load(); old != nil {
			tbl = append(tbl, *old...)
		}
		for len(tbl) <= index {
			tbl = append(tbl, nil)
		}
		tbl[index] = s
		m.interceptors.Store(&tbl)
	}
	return s
}

// newInterceptorSeries prepares a registration's children. They resolve
// on first use, so the exposition shows only the points and decisions an
// interceptor actually produced.
func (m *Metrics) newInterceptorSeries(index int, name string) *interceptorSeries {
	label := name
	if label == "" {
		label = "#" + strconv.Itoa(index)
	}
	s := &interceptorSeries{name: name, label: label, failures: make([]*lazyCounter, len(m.labels.reasons))}
	for p := range numPoints {
		for d := range numDecisions {
			s.verdicts[p][d] = &lazyCounter{vec: m.interceptorVerdict, lvs: []string{label, m.labels.points[p], m.labels.decisions[d]}}
		}
		s.duration[p] = &lazyObserver{vec: m.interceptorDur, lvs: []string{label, m.labels.points[p]}}
	}
	for i, r := range m.labels.reasons {
		if enforcement.IsHostError(r) {
			s.failures[i] = &lazyCounter{vec: m.interceptorFail, lvs: []string{label, r}}
		}
	}
	return s
}

// lazyCounter is a vector child resolved on first use.
type lazyCounter struct {
	c   atomic.Pointer[prometheus.Counter]
	vec *prometheus.CounterVec
	lvs []string
}

func (l *lazyCounter) Inc() {
	if c := l.c.Load(); c != nil {
		(*c).Inc()
		return
	}
	c := l.vec.WithLabelValues(l.lvs...)
	l.c.Store(&c)
	c.Inc()
}

// lazyObserver is a histogram child resolved on first use.
type lazyObserver struct {
	o   atomic.Pointer[prometheus.Observer]
	vec *prometheus.HistogramVec
	lvs []string
}

func (l *lazyObserver) Observe(v float64) {
	if o := l.o.Load(); o != nil {
		(*o).Observe(v)
		return
	}
	o := l.vec.WithLabelValues(l.lvs...)
	l.o.Store(&o)
	o.Observe(v)
}
