/**
 * A ticketd fleet in containers on a user-defined Docker network, each at its own address: backends
 * A and B (the MySQL image, with sql/'s option files) and front ends running this checkout's build
 * (the Node image, the checkout mounted read-only). The test process reaches them only through ports
 * published on 127.0.0.1; they reach each other on their own network. Started with testcontainers.
 */
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { MySqlContainer, type StartedMySqlContainer } from '@testcontainers/mysql';
import { resolve } from 'node:path';
import { Allocator } from '../../src/allocator/allocator.js';
import { loadConfig } from '../../src/config/load-config.js';
import { backendOptionFile } from '../../src/launcher/local-mysql.js';
import { silentLogger } from '../../src/logger.js';
import { initBackends } from '../../src/service/init.js';
import { TicketService } from '../../src/service/ticket-service.js';
import { image } from './docker.js';
import { answersQueries } from './shared-pair.js';
import { TEST_ADMIN_TOKEN } from './ticketd.js';

const ROOT_PASSWORD = 'ticketd-fleet';

/** A backend container: its address on the fleet's network, and its URL from this process. */
export interface FleetBackend {
  readonly name: string;
  readonly container: StartedMySqlContainer;
  readonly ip: string;
  readonly hostUrl: string;
}

/** A front end container: its address on the fleet's network, and its HTTP base URL from this process. */
export interface FleetFrontEnd {
  readonly name: string;
  readonly container: StartedTestContainer;
  readonly ip: string;
  readonly url: string;
}

/** The running fleet; close() stops every container and the network. */
export interface DockerFleet {
  readonly backends: readonly FleetBackend[];
  readonly frontEnds: readonly FleetFrontEnd[];
  close(): Promise<void>;
}

/** Starts backends a and b and one front end per entry of `frontEnds` (its settings added to the environment), initialised. */
export async function startDockerFleet(frontEnds: readonly Record<string, string>[]): Promise<DockerFleet> {
  const network = await new Network().start();
  const started: StartedTestContainer[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(started.map((c) => c.stop()));
    await network.stop();
  };
  try {
    const backends = await Promise.all(['a', 'b'].map((name) => startBackend(network, name, started)));
    const hostUrls = backends.map((b) => b.hostUrl).join(',');
    const allocator = new Allocator({ backends: loadConfig({ backends: hostUrls }).backends, logger: silentLogger });
    const service = new TicketService({ allocator, logger: silentLogger });
    await initBackends(allocator, service).finally(() => service.close());
    const inside = backends.map((b) => `mysql://root:${ROOT_PASSWORD}@mysql-${b.name}:3306/ticketd`).join(',');
    const fronts = await Promise.all(
      frontEnds.map((env, i) => startFrontEnd(network, `fe${i + 1}`, inside, env, started)),
    );
    return { backends, frontEnds: fronts, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function startBackend(
  network: StartedNetwork,
  name: string,
  started: StartedTestContainer[],
): Promise<FleetBackend> {
  const container = await new MySqlContainer(image('TICKETD_MYSQL_IMAGE'))
    .withNetwork(network)
    .withNetworkAliases(`mysql-${name}`)
    .withDatabase('ticketd')
    .withRootPassword(ROOT_PASSWORD)
    .withCopyFilesToContainer([{ source: backendOptionFile(name), target: '/etc/mysql/conf.d/ticketd.cnf' }])
    .withWaitStrategy(answersQueries(ROOT_PASSWORD))
    .start();
  started.push(container);
  return {
    name,
    container,
    ip: container.getIpAddress(network.getName()),
    hostUrl: `mysql://root:${ROOT_PASSWORD}@${container.getHost()}:${container.getPort()}/ticketd`,
  };
}

async function startFrontEnd(
  network: StartedNetwork,
  name: string,
  backends: string,
  env: Record<string, string>,
  started: StartedTestContainer[],
): Promise<FleetFrontEnd> {
  const container = await new GenericContainer(image('TICKETD_NODE_IMAGE'))
    .withNetwork(network)
    .withNetworkAliases(name)
    // This checkout's build and node_modules (npm test builds first), read-only.
    .withBindMounts([{ source: resolve('.'), target: '/app', mode: 'ro' }])
    .withWorkingDir('/app')
    // Strict sequences' followers reach the leader at its network alias (TICKETD_ADVERTISE_HOST).
    .withEnvironment({
      TICKETD_BACKENDS: backends,
      TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      TICKETD_PORT: '8080',
      TICKETD_LOG_LEVEL: 'warn',
      TICKETD_ADVERTISE_HOST: name,
      // The peer listener binds loopback unless told otherwise; the others reach it over the network.
      TICKETD_HOST: '0.0.0.0',
      ...env,
    })
    .withCommand(['node', 'dist/cli/main.js', 'serve'])
    .withExposedPorts(8080)
    .withWaitStrategy(Wait.forHttp('/readyz', 8080).forStatusCode(200))
    .start();
  started.push(container);
  return {
    name,
    container,
    ip: container.getIpAddress(network.getName()),
    url: `http://${container.getHost()}:${container.getMappedPort(8080)}`,
  };
}
