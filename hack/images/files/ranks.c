/* ranks: the end-to-end check. Every rank reports its rank and hostname to
 * rank 0, which prints one line per rank, and an Allreduce of the ranks
 * must give size*(size-1)/2. Exits non-zero when it does not. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size;
  long sum = 0, mine;
  char host[256] = {0};

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gethostname(host, sizeof host - 1);

  char all[size][256];
  MPI_Gather(host, 256, MPI_CHAR, all, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  mine = rank;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  int ok = sum == (long)size * (size - 1) / 2;
  if (rank == 0) {
    for (int r = 0; r < size; r++) {
      printf("RANK %d HOST %s\n", r, all[r]);
    }
    printf("ALLREDUCE %ld EXPECTED %ld %s\n", sum, (long)size * (size - 1) / 2, ok ? "OK" : "WRONG");
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
