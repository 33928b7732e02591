/**
 * deploy/kubernetes/ against the Kubernetes OpenAPI schemas, offline, with kubernetes-models (its
 * compiled validators of the API's schemas: types, required fields, enums, formats). Those schemas
 * do not forbid unknown fields (the API server's strict field validation does), so the fields
 * ticketd relies on are also checked by name here. No cluster runs: nothing is applied.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: unknown };
const models: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

const dir = 'deploy/kubernetes';
const manifests: { file: string; doc: Manifest }[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => ({ file, doc: d.toJSON() as Manifest })),
  );

/** Validates a manifest with the model of its apiVersion and kind; the error's message, or undefined. */
function schemaError(doc: Manifest): string | undefined {
  const Model = models[`${doc.apiVersion}/${doc.kind}`];
  if (Model === undefined) return `no schema for ${doc.apiVersion}/${doc.kind}`;
  try {
    new Model(doc as never).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function one(kind: string, name: string): Manifest {
  const found = manifests.filter((m) => m.doc.kind === kind && m.doc.metadata.name === name);
  expect(found).toHaveLength(1);
  return found[0]!.doc;
}

interface Container {
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  readinessProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  ports?: { name: string; containerPort: number }[];
}

describe('the Kubernetes manifests', () => {
  it('are each valid against the Kubernetes OpenAPI schemas', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(8);
    const errors = manifests
      .map(({ file, doc }) => [`${file}: ${doc.kind} ${doc.metadata.name}`, schemaError(doc)])
      .filter(([, e]) => e !== undefined);
    expect(errors).toEqual([]);
    console.log(`kubernetes manifests: ${manifests.length} valid (${manifests.map((m) => m.doc.kind).join(', ')})`);
  });

  it('fail the validator when broken (it is not a rubber stamp)', () => {
    const deployment = structuredClone(one('Deployment', 'ticketd')) as {
      spec: { template: { spec: { containers: { ports: { containerPort: unknown }[] }[] } } };
    } & Manifest;
    deployment.spec.template.spec.containers[0]!.ports[0]!.containerPort = '8080';
    expect(schemaError(deployment)).toMatch(/containerPort must be integer/);
    const pdb = structuredClone(one('PodDisruptionBudget', 'ticketd')) as Manifest & { spec: Record<string, unknown> };
    pdb.spec.selector = 'app=ticketd';
    expect(schemaError(pdb)).toMatch(/selector must be object/);
  });

  it('probe /readyz and /healthz, wait in preStop, drain within the grace period, and run non-root on a read-only root', () => {
    const deployment = one('Deployment', 'ticketd') as Manifest & {
      spec: {
        selector: { matchLabels: Record<string, string> };
        template: {
          metadata: { labels: Record<string, string> };
          spec: {
            terminationGracePeriodSeconds: number;
            securityContext: Record<string, unknown>;
            volumes: { name: string; secret?: { secretName: string } }[];
            containers: Container[];
          };
        };
      };
    };
    const pod = deployment.spec.template.spec;
    const c = pod.containers[0]!;
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const preStop = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
    expect(preStop).toBeGreaterThan(0);
    // ticketd drains for at most 10 s after SIGTERM, which comes after preStop.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + 10);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources?.requests).toEqual(
      expect.objectContaining({ cpu: expect.any(String) as unknown, memory: expect.any(String) as unknown }),
    );
    expect(c.resources?.limits?.memory).toBeDefined();
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
  });

  it('hand secrets over as files: every _FILE setting lies in a read-only mount of a Secret, and no secret is a plain variable', () => {
    const deployment = one('Deployment', 'ticketd') as Manifest & {
      spec: {
        template: { spec: { volumes: { name: string; secret?: { secretName: string } }[]; containers: Container[] } };
      };
    };
    const pod = deployment.spec.template.spec;
    const c = pod.containers[0]!;
    const secretVolumes = new Set(pod.volumes.filter((v) => v.secret !== undefined).map((v) => v.name));
    const secretMounts = (c.volumeMounts ?? []).filter((m) => secretVolumes.has(m.name));
    const fileSettings = (c.env ?? []).filter((e) => e.name.endsWith('_FILE'));
    expect(fileSettings.map((e) => e.name).sort()).toEqual([
      'TICKETD_ADMIN_TOKEN_FILE',
      'TICKETD_BACKENDS_FILE',
      'TICKETD_CLIENT_TOKENS_FILE',
    ]);
    for (const setting of fileSettings)
      expect(secretMounts.some((m) => m.readOnly === true && setting.value!.startsWith(`${m.mountPath}/`))).toBe(true);
    expect((c.env ?? []).map((e) => e.name)).not.toEqual(expect.arrayContaining(['TICKETD_BACKENDS']));
    expect((c.env ?? []).map((e) => e.name)).not.toEqual(expect.arrayContaining(['TICKETD_ADMIN_TOKEN']));
    // The mounted keys exist in the example Secret.
    const secret = one('Secret', 'ticketd') as Manifest & { stringData: Record<string, string> };
    for (const setting of fileSettings)
      expect(Object.keys(secret.stringData)).toContain(setting.value!.split('/').pop());
  });

  it('select the same pods from the Service and the PodDisruptionBudget, and name a holder and an advertised host from the downward API', () => {
    const labels = (
      one('Deployment', 'ticketd') as Manifest & {
        spec: { template: { metadata: { labels: Record<string, string> } } };
      }
    ).spec.template.metadata.labels;
    expect(labels).toMatchObject(
      (one('Service', 'ticketd') as Manifest & { spec: { selector: Record<string, string> } }).spec.selector,
    );
    expect(labels).toMatchObject(
      (
        one('PodDisruptionBudget', 'ticketd') as Manifest & {
          spec: { selector: { matchLabels: Record<string, string> } };
        }
      ).spec.selector.matchLabels,
    );
    const env =
      (one('Deployment', 'ticketd') as Manifest & { spec: { template: { spec: { containers: Container[] } } } }).spec
        .template.spec.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'TICKETD_ADVERTISE_HOST')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'status.podIP' },
    });
    const app =
      (one('Deployment', 'your-app') as Manifest & { spec: { template: { spec: { containers: Container[] } } } }).spec
        .template.spec.containers[0]!.env ?? [];
    expect(app.find((e) => e.name === 'POD_NAME')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
  });
});
