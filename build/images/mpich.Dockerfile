# MPICH 4.2 (Debian trixie), with sshd for root (22) and mpiuser (2222):
# hack/images/build.sh's "mpich" image, for Docker (not built in CI; build/images/README.md).
# docker build -f build/images/mpich.Dockerfile -t REGISTRY/mpich:TAG .
FROM debian:trixie
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      mpich libmpich-dev automake openssh-server openssh-client gcc-14 libc6-dev \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/*
COPY hack/images/files/pi.c hack/images/files/ranks.c /opt/mpi/
RUN cd /opt/mpi && MPICH_CC=gcc-14 mpicc -O2 -o pi pi.c && MPICH_CC=gcc-14 mpicc -O2 -o ranks ranks.c
RUN useradd -m -u 1000 -s /bin/bash mpiuser
# No host keys of the image's own: every container of it would share
# them. sshd presents the job's key, which the launcher's known_hosts pins.
RUN rm -f /etc/ssh/ssh_host_* && install -d /run/sshd /etc/ssh/sshd_config.d /etc/ssh/ssh_config.d \
 && printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nStrictModes no\nHostKey /root/.ssh/id_rsa\n' \
      > /etc/ssh/sshd_config.d/mpi.conf
COPY --chown=1000:1000 --chmod=0644 hack/images/files/sshd_config.nonroot /home/mpiuser/.sshd_config
COPY --chmod=0644 hack/images/files/ssh_config /etc/ssh/ssh_config.d/mpi.conf
ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CMD ["/usr/sbin/sshd", "-De"]
