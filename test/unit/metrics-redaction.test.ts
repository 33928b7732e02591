import { redactMetrics } from '../../src/http/visibility.js';

const TEXT = `# HELP ticketd_ids_issued_total IDs handed out by this process, per sequence.
# TYPE ticketd_ids_issued_total counter
ticketd_ids_issued_total{sequence="orders"} 120
ticketd_ids_issued_total{sequence="invoices"} 7919
ticketd_ids_issued_total{sequence="other_worker"} 5
ticketd_ids_issued_total{sequence="unreadable"} 3
ticketd_ticket_fetch_duration_seconds_bucket{le="+Inf",backend="A",sequence="invoices"} 4
ticketd_ticket_fetch_duration_seconds_bucket{le="+Inf",backend="A",sequence="orders"} 2
ticketd_backend_up{backend="A"} 1
# HELP ticketd_backend_info Which server a backend name stands for.
# TYPE ticketd_backend_info gauge
ticketd_backend_info{backend="A",address="mysql://db-a:3306/ticketd",identity="5f1c",tls_version="TLSv1.3",tls_cipher="TLS_AES_256_GCM_SHA384"} 1
ticketd_ready 1
`;

describe('/metrics without the admin token', () => {
  test('keeps ordered sequences and unlabelled series, and drops ticketd_backend_info and opaque, unknown and unreadable sequences (fail closed)', async () => {
    const modes: Record<string, 'ordered' | 'opaque' | undefined> = {
      orders: 'ordered',
      invoices: 'opaque',
      other_worker: 'ordered',
    };
    const asked: string[] = [];
    const shown = await redactMetrics(TEXT, async (name) => {
      asked.push(name);
      if (name === 'unreadable') throw new Error('no backend answered');
      return modes[name];
    });
    expect(shown).toBe(`# HELP ticketd_ids_issued_total IDs handed out by this process, per sequence.
# TYPE ticketd_ids_issued_total counter
ticketd_ids_issued_total{sequence="orders"} 120
ticketd_ids_issued_total{sequence="other_worker"} 5
ticketd_ticket_fetch_duration_seconds_bucket{le="+Inf",backend="A",sequence="orders"} 2
ticketd_backend_up{backend="A"} 1
ticketd_ready 1
`);
    // Each sequence's mode is asked once per scrape, however many samples it has.
    expect(asked.sort()).toEqual(['invoices', 'orders', 'other_worker', 'unreadable']);
  });
});
