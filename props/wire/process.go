package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kverify/kverify/traces"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// processTimeout bounds, in real time, a process client's answer to state
// and its exit after stop: past it the call fails, naming the hang.
const processTimeout = 10 * time.Second

// Process is a subject whose client is a process that speaks
// kverify-client/v1 (traces/client.schema.json): argv run in dir with
// KVERIFY_SERVER_URL, KVERIFY_NAMESPACE and KVERIFY_RESOURCE set. It runs in
// real time (Subject.Realtime), schedules of them each run.
func Process(name, dir string, schedules int, argv ...string) Subject {
	return Subject{Name: name, Realtime: true, Schedules: schedules,
		Start: func(url string, _ http.RoundTripper) (Client, error) { return startProcess(dir, url, argv) }}
}

type procClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	states chan Line
	done   chan struct{} // closed when stdout has ended
	mu     sync.Mutex
	lines  []Line
	bad    error // the first line that broke the protocol
	stderr tail
}

func startProcess(dir, url string, argv []string) (*procClient, error) {
	if len(argv) == 0 {
		return nil, errors.New("wire: a process subject needs a command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KVERIFY_SERVER_URL="+url, "KVERIFY_NAMESPACE="+Namespace, "KVERIFY_RESOURCE="+Resource)
	c := &procClient{cmd: cmd, states: make(chan Line, 1), done: make(chan struct{})}
	cmd.Stderr = &c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("wire: starting %v: %w", argv, err)
	}
	go c.read(stdout)
	return c, nil
}

// clientSchema is traces/client.schema.json, compiled once.
var clientSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(traces.ClientSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("client.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("client.schema.json")
})

// ValidateLine checks one line a client wrote against the protocol's
// schema (traces/client.schema.json) and decodes it.
func ValidateLine(text []byte) (Line, error) {
	schema, err := clientSchema()
	if err != nil {
		return Line{}, fmt.Errorf("the protocol's schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return Line{}, err
	}
	if err := schema.Validate(v); err != nil {
		return Line{}, err
	}
	var l Line
	err = json.Unmarshal(text, &l)
	return l, err
}

// read takes the process's lines until its stdout ends.
func (c *procClient) read(stdout io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // a state line lists the whole cache
	for sc.Scan() {
		l, err := ValidateLine(sc.Bytes())
		if err != nil {
			c.mu.Lock()
			if c.bad == nil {
				c.bad = fmt.Errorf("line %q: %v", sc.Text(), err)
			}
			c.mu.Unlock()
			continue
		}
		if l.Type == LineState {
			select {
			case c.states <- l:
			default: // an answer nobody asked for
			}
			continue
		}
		c.mu.Lock()
		c.lines = append(c.lines, l)
		c.mu.Unlock()
	}
}

func (c *procClient) Lines() []Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

func (c *procClient) send(op string) error {
	_, err := fmt.Fprintf(c.stdin, "{\"op\":%q}\n", op)
	return err
}

func (c *procClient) State() (Line, error) {
	if err := c.send("state"); err != nil {
		return Line{}, fmt.Errorf("asking for state: %w (stderr: %s)", err, c.stderr.String())
	}
	select {
	case l := <-c.states:
		return l, nil
	case <-c.done:
		return Line{}, fmt.Errorf("the process ended without answering state (stderr: %s)", c.stderr.String())
	case <-time.After(processTimeout):
		return Line{}, fmt.Errorf("no state answer within %v (stderr: %s)", processTimeout, c.stderr.String())
	}
}

// Stop asks the process to stop, closes its stdin and waits for it; past
// processTimeout it is killed and Stop says so. A line that broke the
// protocol is reported here.
func (c *procClient) Stop() error {
	_ = c.send("stop")
	_ = c.stdin.Close()
	var err error
	select {
	case <-c.done:
	case <-time.After(processTimeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		err = fmt.Errorf("the process did not exit within %v of stop: killed (stderr: %s)", processTimeout, c.stderr.String())
	}
	if werr := c.cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("the process exited with %v (stderr: %s)", werr, c.stderr.String())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.bad != nil {
		err = fmt.Errorf("protocol: %w", c.bad)
	}
	if n := len(c.lines); err == nil && (n == 0 || c.lines[n-1].Type != LineStopped) {
		err = errors.New("protocol: the last line is not stopped")
	}
	return err
}

// tail keeps the last 4 KiB written to it (a process's stderr).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if n := len(t.buf); n > 4096 {
		t.buf = t.buf[n-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
