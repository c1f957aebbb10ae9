// Pins how a job that failed on the user's model becomes a diagnostic on the user's file and line:
// the host names its snapshot of the model (<jobsDir>/<jobId>/model.py), which maps back to the
// job's document; the newest job of a document decides. The messages are the host's own, for a
// file that does not parse, raises on import, in __init__ or in forward.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobStore } from '../../../extension/src/model/jobStore';
import { diagnosticsByDocument, fileUriPath, jobDiagnostic, parseLocatedError } from '../../../extension/src/model/jobDiagnostics';

const URI = 'file:///work/models/bad%20model.py';
const failed = (jobId: string, message: string, uri = URI) => ({ jobId, uri, state: 'failed', message });

test('the host\'s located errors parse into file, line, message and code', () => {
  assert.deepEqual(parseLocatedError("/s/jobs/j1/m.py:3: expected ':' [syntax_error]"),
    { file: '/s/jobs/j1/m.py', line: 3, message: "expected ':'", code: 'syntax_error' });
  assert.deepEqual(parseLocatedError('/s/jobs/j1/m.py:6: Model.__init__: ValueError: bad config'),
    { file: '/s/jobs/j1/m.py', line: 6, message: 'Model.__init__: ValueError: bad config' });
  assert.equal(parseLocatedError("ModuleNotFoundError: No module named 'torch' [internal_error]"), undefined);
  assert.equal(parseLocatedError('the harness worker could not start (cannot run /x: No such file) [worker_start_failed]'), undefined);
  assert.equal(fileUriPath(URI), '/work/models/bad model.py');
  assert.equal(fileUriPath('untitled:Untitled-1'), undefined);
});

test('model load errors land on the user\'s file and line (zero-based)', () => {
  const snap = '/root/.local/state/stitchcuda/jobs/20261125-094046-d276/bad model.py';
  const cases: [string, number, string, string][] = [
    [`${snap}:3: expected ':' [syntax_error]`, 2, "expected ':'", 'syntax_error'],
    [`${snap}:2: importing bad model.py: ModuleNotFoundError: No module named 'not_a_module' [task_import_error]`, 1,
      "importing bad model.py: ModuleNotFoundError: No module named 'not_a_module'", 'task_import_error'],
    [`${snap}:6: Model.__init__: ValueError: bad config [task_init_error]`, 5, 'Model.__init__: ValueError: bad config', 'task_init_error'],
    [`${snap}:6: Model.forward: RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x4 and 3x3) [task_forward_error]`, 5,
      'Model.forward: RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x4 and 3x3)', 'task_forward_error'],
  ];
  for (const [message, line, text, code] of cases) {
    assert.deepEqual(jobDiagnostic(failed('20261125-094046-d276', message)), { uri: URI, line, message: text, code });
  }
  // The user's own path, as a headless host or a reopened log may name it.
  assert.equal(jobDiagnostic(failed('j2', '/work/models/bad model.py:4: boom [task_forward_error]'))?.line, 3);
});

test('errors elsewhere, or without a line, or of jobs that did not fail, are no diagnostic', () => {
  assert.equal(jobDiagnostic(failed('j1', '/other/jobs/j9/bad model.py:3: x [syntax_error]')), undefined, 'another job\'s snapshot');
  assert.equal(jobDiagnostic(failed('j1', '/s/jobs/j1/candidates/c1/model_new.py:3: x [build_error]')), undefined, 'a candidate\'s file');
  assert.equal(jobDiagnostic(failed('j1', "ModuleNotFoundError: No module named 'torch' [internal_error]")), undefined);
  assert.equal(jobDiagnostic({ jobId: 'j1', uri: URI, state: 'improved', message: '/s/jobs/j1/bad model.py:3: x' }), undefined);
});

test('the newest job of a document decides: running it again clears the diagnostic', () => {
  const store = new JobStore();
  store.started('j1', URI);
  store.finished({ jobId: 'j1', state: 'failed', message: "/s/jobs/j1/bad model.py:3: expected ':' [syntax_error]" });
  store.started('k1', 'file:///work/models/other.py');
  store.finished({ jobId: 'k1', state: 'improved', message: 'done' });
  let byDoc = diagnosticsByDocument(store.all());
  assert.equal(byDoc.get(URI)?.[0]?.line, 2);
  assert.deepEqual(byDoc.get('file:///work/models/other.py'), []);
  store.started('j2', URI);
  byDoc = diagnosticsByDocument(store.all());
  assert.deepEqual(byDoc.get(URI), [], 'a new run of the file clears its diagnostic');
  store.finished({ jobId: 'j2', state: 'failed', message: '/s/jobs/j2/bad model.py:9: Model.forward: RuntimeError: x [task_forward_error]' });
  assert.equal(diagnosticsByDocument(store.all()).get(URI)?.[0]?.line, 8);
});
