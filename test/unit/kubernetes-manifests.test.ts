/**
 * deploy/kubernetes/ against the Kubernetes API, offline, strictly: every document of every file
 * in the folder is checked with kubernetes-models' compiled validators of the API's OpenAPI schemas
 * (types, required fields, enums, formats) and compiled as its kind's TypeScript type, which
 * refuses unknown fields at any depth as the API server's strict field validation does
 * (test/support/kubernetes-types.ts). Then each security property the manifests promise is
 * asserted by itself, so that removing one fails here. No cluster runs: nothing is applied.
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
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { SETTING_NAMES } from '../../src/config/settings.js';
import { KUBERNETES_TYPES, typeProblems, type NamedManifest } from '../support/kubernetes-types.js';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: unknown };
const models: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

const dir = 'deploy/kubernetes';
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
const manifests: { file: string; doc: Manifest }[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => ({ file, doc: d.toJSON() as Manifest })),
);
const named = (list: { file: string; doc: Manifest }[]): NamedManifest[] =>
  list.map(({ file, doc }) => ({ where: `${file}: ${doc.kind} ${doc.metadata.name}`, doc }));

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

interface Kinds {
  Deployment: IDeployment;
  Job: IJob;
  NetworkPolicy: INetworkPolicy;
  PodDisruptionBudget: IPodDisruptionBudget;
  Secret: ISecret;
  Service: IService;
}

/** The one manifest of a kind and name in the folder, as its kind's type. */
function one<K extends keyof Kinds>(kind: K, name: string): Kinds[K] & Manifest {
  const found = manifests.filter((m) => m.doc.kind === kind && m.doc.metadata.name === name);
  expect(found).toHaveLength(1);
  return found[0]!.doc as unknown as Kinds[K] & Manifest;
}

const deployment = (): IDeployment & Manifest => one('Deployment', 'ticketd');
const pod = (): IPodSpec => deployment().spec!.template.spec!;
const ticketd = (): IContainer => pod().containers[0]!;
const env = (c: IContainer, name: string): string | undefined => c.env?.find((e) => e.name === name)?.value;

/** The ticketd pods of the folder (the Deployment's and the init Job's), by name. */
const ticketdPods = (): [string, IPodSpec][] => [
  ['Deployment ticketd', pod()],
  ['Job ticketd-init', one('Job', 'ticketd-init').spec!.template.spec!],
];

describe('the Kubernetes manifests', () => {
  it('are each valid against the Kubernetes OpenAPI schemas, and every file of the folder is read', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    expect(new Set(manifests.map((m) => m.file))).toEqual(new Set(files));
    const errors = manifests
      .map(({ file, doc }) => [`${file}: ${doc.kind} ${doc.metadata.name}`, schemaError(doc)])
      .filter(([, e]) => e !== undefined);
    expect(errors).toEqual([]);
    console.log(`kubernetes manifests: ${manifests.length} valid (${manifests.map((m) => m.doc.kind).join(', ')})`);
  });

  it('have no field the API does not know, at any depth, and every kind has its type', () => {
    for (const { doc } of manifests) expect(Object.keys(KUBERNETES_TYPES)).toContain(`${doc.apiVersion}/${doc.kind}`);
    expect(typeProblems(named(manifests))).toEqual([]);
  }, 60_000);

  it('fail both checks when broken (they are not rubber stamps)', () => {
    const broken = structuredClone(deployment()) as unknown as Manifest & {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    const c = broken.spec.template.spec.containers[0]!;
    (c.ports as { containerPort: unknown }[])[0]!.containerPort = '8443';
    expect(schemaError(broken)).toMatch(/containerPort must be integer/);
    const pdb = structuredClone(one('PodDisruptionBudget', 'ticketd')) as Manifest & { spec: Record<string, unknown> };
    pdb.spec.selector = 'app=ticketd';
    expect(schemaError(pdb)).toMatch(/selector must be object/);
    // A misspelt field deep inside passes the schemas but not the types.
    const typo = structuredClone(deployment()) as unknown as Manifest & {
      spec: { template: { spec: { containers: { securityContext: Record<string, unknown> }[] } } };
    };
    typo.spec.template.spec.containers[0]!.securityContext.readOnlyRootFilesytem = true;
    expect(schemaError(typo)).toBeUndefined();
    const problems = typeProblems(named([{ file: 'typo.yaml', doc: typo }]));
    expect(problems).toEqual([
      expect.stringMatching(
        /^typo\.yaml: Deployment ticketd: .*readOnlyRootFilesytem.* does not exist in type 'ISecurityContext'/,
      ),
    ]);
  }, 60_000);

  it('run every ticketd container non-root on a read-only root, without capabilities, under seccomp RuntimeDefault', () => {
    for (const [where, spec] of ticketdPods()) {
      expect([where, spec.securityContext]).toEqual([
        where,
        expect.objectContaining({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } }),
      ]);
      expect([where, spec.automountServiceAccountToken]).toEqual([where, false]);
      // Service links would set variables named after the Service (TICKETD_PORT=tcp://…): unknown settings refuse start.
      expect([where, spec.enableServiceLinks]).toEqual([where, false]);
      for (const c of spec.containers) {
        expect([where, c.securityContext]).toEqual([
          where,
          expect.objectContaining({
            runAsNonRoot: true,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          }),
        ]);
        expect(c.securityContext?.capabilities?.add).toBeUndefined();
        expect(c.securityContext?.privileged).not.toBe(true);
        expect([where, Object.keys(c.resources?.requests ?? {}).sort()]).toEqual([where, ['cpu', 'memory']]);
        expect(c.resources?.limits?.memory).toBeDefined();
      }
    }
  });

  it('verify every backend: VERIFY_IDENTITY, each URL with its own CA from a mounted Secret', () => {
    const cas = one('Secret', 'ticketd-backend-ca');
    for (const [where, spec] of ticketdPods()) {
      const c = spec.containers[0]!;
      expect([where, env(c, 'TICKETD_BACKEND_SSL_MODE')]).toEqual([where, 'VERIFY_IDENTITY']);
      const caVolume = spec.volumes?.find((v) => v.secret?.secretName === 'ticketd-backend-ca');
      const mount = c.volumeMounts?.find((m) => m.name === caVolume?.name);
      expect([where, mount?.readOnly]).toEqual([where, true]);
      for (const secretName of ['ticketd', 'ticketd-admin']) {
        const urls = (one('Secret', secretName).stringData?.backends ?? '').split(',');
        expect(urls.length).toBeGreaterThanOrEqual(2);
        const files = urls.map((u) => {
          const query = new URL(u).searchParams;
          expect([u, query.get('ssl-mode')]).toEqual([u, 'VERIFY_IDENTITY']);
          return query.get('ssl-ca') ?? '';
        });
        for (const file of files) {
          expect(file.startsWith(`${mount!.mountPath}/`)).toBe(true);
          expect(Object.keys(cas.stringData ?? {})).toContain(file.slice(mount!.mountPath.length + 1));
        }
        expect(new Set(files).size).toBe(urls.length); // a CA per backend
      }
    }
  });

  it('serve HTTPS from a TLS Secret, and probe /readyz and /healthz over HTTPS on that port', () => {
    const c = ticketd();
    const https = pod().volumes!.find((v) => v.secret?.secretName === 'ticketd-https')!;
    const mount = c.volumeMounts!.find((m) => m.name === https.name)!;
    expect(mount.readOnly).toBe(true);
    expect(env(c, 'TICKETD_TLS_CERT')).toBe(`${mount.mountPath}/tls.crt`);
    expect(env(c, 'TICKETD_TLS_KEY')).toBe(`${mount.mountPath}/tls.key`);
    expect(one('Secret', 'ticketd-https').type).toBe('kubernetes.io/tls');
    const port = c.ports!.find((p) => p.name === 'https')!;
    expect(String(port.containerPort)).toBe(env(c, 'TICKETD_PORT'));
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'https', scheme: 'HTTPS' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'https', scheme: 'HTTPS' });
    const service = one('Service', 'ticketd');
    expect(service.spec!.ports!.map((p) => p.targetPort)).toEqual(['https']);
  });

  it('wait in preStop and drain within the grace period', () => {
    const preStop = ticketd().lifecycle?.preStop?.sleep?.seconds ?? 0;
    expect(preStop).toBeGreaterThan(0);
    // ticketd drains for at most 10 s after SIGTERM, which comes after preStop.
    expect(pod().terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + 10);
  });

  it('hand secrets over as files: every _FILE setting lies in a read-only mount of a Secret that has the key, and no secret is a variable', () => {
    for (const [where, spec] of ticketdPods()) {
      const c = spec.containers[0]!;
      const fileSettings = (c.env ?? []).filter((e) => e.name.endsWith('_FILE'));
      for (const setting of fileSettings) {
        const mount = c.volumeMounts?.find((m) => setting.value!.startsWith(`${m.mountPath}/`));
        const volume = spec.volumes?.find((v) => v.name === mount?.name);
        expect([where, setting.name, mount?.readOnly, volume?.secret?.secretName]).toEqual([
          where,
          setting.name,
          true,
          expect.any(String),
        ]);
        const secret = one('Secret', volume!.secret!.secretName!);
        expect(Object.keys(secret.stringData ?? {})).toContain(setting.value!.slice(mount!.mountPath.length + 1));
      }
      for (const secretSetting of ['TICKETD_BACKENDS', 'TICKETD_ADMIN_BACKENDS', 'TICKETD_ADMIN_TOKEN']) {
        expect([where, (c.env ?? []).some((e) => e.name === secretSetting)]).toEqual([where, false]);
      }
      expect([where, (c.env ?? []).some((e) => e.valueFrom?.secretKeyRef !== undefined)]).toEqual([where, false]);
    }
    expect(
      (ticketd().env ?? [])
        .filter((e) => e.name.endsWith('_FILE'))
        .map((e) => e.name)
        .sort(),
    ).toEqual([
      'TICKETD_ADMIN_TOKEN_FILE',
      'TICKETD_BACKENDS_FILE',
      'TICKETD_CLIENT_TOKENS_FILE',
      'TICKETD_PEER_SECRET_FILE',
    ]);
    // The admin account reaches only the init Job, through its _FILE setting.
    const init = one('Job', 'ticketd-init').spec!.template.spec!.containers[0]!;
    expect(env(init, 'TICKETD_ADMIN_BACKENDS_FILE')).toMatch(/^\/run\/secrets\/ticketd-admin\//);
    expect(pod().volumes!.some((v) => v.secret?.secretName === 'ticketd-admin')).toBe(false);
  });

  it('name only settings ticketd knows (an unknown TICKETD_ variable refuses start)', () => {
    const known = new Set(Object.values(SETTING_NAMES).filter((n) => n.startsWith('TICKETD_')));
    for (const [where, spec] of ticketdPods())
      for (const e of spec.containers[0]!.env ?? []) {
        const base = e.name.replace(/_FILE$/, '');
        expect([where, e.name, known.has(e.name) || known.has(base)]).toEqual([where, e.name, true]);
      }
  });

  it('bind and advertise the pod IP, and let only ticketd pods reach the peer port', () => {
    const c = ticketd();
    for (const name of ['TICKETD_HOST', 'TICKETD_ADVERTISE_HOST'])
      expect(c.env?.find((e) => e.name === name)?.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
    const peerPort = c.ports!.find((p) => p.name === 'peer')!.containerPort;
    expect(String(peerPort)).toBe(env(c, 'TICKETD_PEER_PORT'));
    const labels = deployment().spec!.template.metadata!.labels!;
    const policy = one('NetworkPolicy', 'ticketd').spec!;
    expect(labels).toMatchObject(policy.podSelector!.matchLabels!);
    expect(policy.policyTypes).toContain('Ingress');
    const reachingPeer = (policy.ingress ?? []).filter(
      (rule) => rule.ports === undefined || rule.ports.some((p) => p.port === peerPort || p.port === 'peer'),
    );
    expect(reachingPeer.length).toBeGreaterThan(0);
    for (const rule of reachingPeer) {
      // Every source named, and each one ticketd's own pods in this namespace (no namespace or IP block).
      expect(rule.from?.length).toBeGreaterThan(0);
      for (const from of rule.from ?? []) {
        expect(from.namespaceSelector).toBeUndefined();
        expect(from.ipBlock).toBeUndefined();
        expect(from.podSelector?.matchLabels).toEqual(policy.podSelector!.matchLabels);
      }
    }
    // The init Job's pods are not ticketd's: they neither pass the policy nor join the Service.
    const initLabels = one('Job', 'ticketd-init').spec!.template.metadata!.labels!;
    expect(initLabels).not.toMatchObject(policy.podSelector!.matchLabels!);
  });

  it('select the same pods from the Service and the PodDisruptionBudget, which lets one go at a time', () => {
    const labels = deployment().spec!.template.metadata!.labels!;
    expect(labels).toMatchObject(deployment().spec!.selector.matchLabels!);
    expect(labels).toMatchObject(one('Service', 'ticketd').spec!.selector!);
    const pdb = one('PodDisruptionBudget', 'ticketd');
    expect(labels).toMatchObject(pdb.spec!.selector!.matchLabels!);
    expect(pdb.spec!.maxUnavailable).toBe(1);
    expect(deployment().spec!.replicas).toBeGreaterThan(1);
  });

  it('state the minimum Kubernetes version beside them, and name a Snowflake holder from the downward API', () => {
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toMatch(/\*\*Kubernetes 1\.30 or later\*\*/);
    const app = one('Deployment', 'your-app').spec!.template.spec!.containers[0]!.env ?? [];
    expect(app.find((e) => e.name === 'POD_NAME')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(app.find((e) => e.name === 'TICKETD_URL')?.value).toMatch(/^https:\/\//);
  });
});
