// Jest setup of the e2e projects: answers from registered hosts are checked against their document,
// and a suite that received a mismatch fails. OPENAPI_RESPONSE_CHECK=report only prints (local triage).
import {
  appendResponseMismatches,
  formatResponseMismatches,
  installOpenApiResponseCheck,
  settleOpenApiResponseChecks,
} from './openapi-response-registry.util';

const mode = process.env.OPENAPI_RESPONSE_CHECK ?? 'fail';
if (mode !== 'fail' && mode !== 'report') {
  throw new Error(`OPENAPI_RESPONSE_CHECK=${mode}: expected fail (the default) or report`);
}

installOpenApiResponseCheck({ currentTestName: () => expect.getState().currentTestName });

afterAll(async () => {
  const { checked, mismatches } = await settleOpenApiResponseChecks();
  if (mode === 'report') {
    // A suite that checked nothing registered no host: worth seeing while triaging.
    process.stderr.write(
      `OpenAPI response check: ${checked} answers checked, ${mismatches.length} mismatches\n`,
    );
  }
  if (mismatches.length === 0) return;
  const summary =
    `${mismatches.length} answer(s) do not match the OpenAPI document of the host that gave them:\n` +
    formatResponseMismatches(mismatches);
  if (mode === 'report') {
    const file = process.env.OPENAPI_RESPONSE_CHECK_FILE;
    if (file) appendResponseMismatches(file, expect.getState().testPath ?? '', mismatches);
    else process.stderr.write(`OpenAPI response check (report mode): ${summary}\n`);
    return;
  }
  throw new Error(summary);
});
