// Payloads shared by the unit tests, shaped like the host's notifications.
import { CandidateParams, PlanParams, ProfileParams } from '../../../extension/src/model/protocol';

export const URI = 'file:///work/examples/mlp.py';

export const range = (a: number, b: number) => ({ start: { line: a, character: 0 }, end: { line: b, character: 0 } });

export const plan: PlanParams = {
  jobId: 'j1', uri: URI, uncovered: ['aten::dropout'],
  tasks: [
    { id: 't1', title: 'Fuse linear + GELU', range: range(10, 12), operators: ['aten::linear', 'aten::gelu'], technique: 'cuBLASLt + GELU epilogue', expectedGainPct: 35, status: 'active' },
    { id: 't2', title: 'LayerNorm kernel', range: range(13, 14), operators: ['aten::layer_norm'], technique: 'fused row kernel', status: 'pending' },
  ],
};

export const candidate = (id: string, status: string, speedupEager?: number): CandidateParams => ({
  jobId: 'j1', uri: URI,
  candidate: { id, taskId: 't1', title: `Candidate ${id}`, range: range(10, 12), status, speedupEager, failedChecks: status === 'failed' ? ['max abs error 3e-2 > atol'] : [], newText: 'x = fused(x)\n' },
});

export const profile: ProfileParams = {
  jobId: 'j1', uri: URI, subject: 'reference', totalGpuTimeUs: 1000,
  lines: [
    { line: 10, gpuTimeUs: 600, share: 0.6, bound: 'compute', achievedPct: 71, kernels: ['sm90_gemm'], inlineText: '600 µs · 60% · compute 71%' },
    { line: 11, gpuTimeUs: 300, share: 0.3, bound: 'memory', kernels: ['gelu'], inlineText: '' },
    { line: 13, gpuTimeUs: 10, share: 0.01, bound: 'latency', kernels: ['ln'], inlineText: '' },
  ],
};
