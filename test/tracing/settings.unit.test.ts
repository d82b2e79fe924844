// The OTEL_* settings as src/config/ reads them: off by default, the traces URL resolved as
// OpenTelemetry specifies (base endpoint + /v1/traces, the signal's own URL as is), headers parsed,
// OTEL_SDK_DISABLED winning, and bad values refused at start with the setting's name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadSettings, SettingsError } from '../../src/config/settings.js';

describe('tracing settings (OTEL_*)', () => {
  let projectDir: string;
  beforeEach(() => {
    projectDir = mkdtempSync(path.join(tmpdir(), 'svc-tracing-settings-'));
  });
  afterEach(() => rmSync(projectDir, { recursive: true, force: true }));

  const tracing = (env: Record<string, string>) => loadSettings(env, projectDir).tracing;

  it('is off with no endpoint, with the defaults for the rest', () => {
    expect(tracing({})).to.deep.equal({ tracesUrl: null, headers: {}, serviceName: 'svc', scheduleDelayMs: 5000 });
  });

  it('appends /v1/traces to the base endpoint (one slash), and takes the traces endpoint as is, first', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracesUrl).to.equal('http://collector:4318/v1/traces');
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/base/' }).tracesUrl).to.equal('http://collector:4318/base/v1/traces');
    expect(
      tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/in' }).tracesUrl,
    ).to.equal('https://traces.example/in');
  });

  it('reads headers as percent-encoded key=value pairs, the traces ones over the base ones', () => {
    const settings = tracing({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc, x-tenant=one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=two',
      OTEL_SERVICE_NAME: 'svc-prod',
      OTEL_BSP_SCHEDULE_DELAY: '250',
    });
    expect(settings).to.deep.equal({
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: { Authorization: 'Bearer abc', 'x-tenant': 'two' },
      serviceName: 'svc-prod',
      scheduleDelayMs: 250,
    });
  });

  it('stays off with OTEL_SDK_DISABLED=true, whatever the endpoint', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_SDK_DISABLED: 'true' }).tracesUrl).to.equal(null);
  });

  it('refuses an endpoint that is no http(s) URL and a header without a value, naming them', () => {
    try {
      loadSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'just-a-name', OTEL_BSP_SCHEDULE_DELAY: 'soon' }, projectDir);
      expect.fail('expected a SettingsError');
    } catch (error) {
      expect(error).to.be.instanceOf(SettingsError);
      const problems = (error as SettingsError).problems.join('\n');
      expect(problems).to.match(/OTEL_EXPORTER_OTLP_ENDPOINT must be a http or https URL/);
      expect(problems).to.match(/OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/);
      expect(problems).to.match(/OTEL_BSP_SCHEDULE_DELAY must be an integer/);
    }
  });
});
